/*
Copyright 2026 The credo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package agent

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
)

// pendingFile holds the renewal request in flight: the request, byte for
// byte, and the serial of the certificate it renews. If the answer is lost
// and the agent restarts before a retry succeeds, the retry sends the same
// request, which the server answers with the certificate it already
// issued; any other request with the replaced certificate is a duplicate
// identity to the server.
const pendingFile = "renewal.json"

type pendingRenewal struct {
	// Serial is the hex serial of the certificate the request renews.
	Serial string `json:"serial"`
	// CSR is the PEM certificate request.
	CSR string `json:"csr"`
}

// renewalRequest returns the request that renews id: the one recorded in
// flight for id's certificate when there is one (for id's key and
// identity), otherwise a new one, recorded before it is sent.
func (a *Agent) renewalRequest(id *identity) ([]byte, error) {
	serial := id.leaf.SerialNumber.Text(16)
	if b, err := os.ReadFile(a.files.path(pendingFile)); err == nil {
		var p pendingRenewal
		if json.Unmarshal(b, &p) == nil && p.Serial == serial && a.requestOf(id, []byte(p.CSR)) {
			return []byte(p.CSR), nil
		}
	}
	csrPEM, err := certificateRequest(id.key, id.uri())
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(pendingRenewal{Serial: serial, CSR: string(csrPEM)})
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(a.files.dir, pendingFile, append(b, '\n'), publicMode); err != nil {
		return nil, err
	}
	return csrPEM, nil
}

// requestOf reports whether csrPEM is a request for id's identity with id's key.
func (a *Agent) requestOf(id *identity, csrPEM []byte) bool {
	blk, _ := pem.Decode(csrPEM)
	if blk == nil {
		return false
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil || len(csr.URIs) != 1 || csr.URIs[0].String() != id.uri().String() {
		return false
	}
	got, err1 := x509.MarshalPKIXPublicKey(csr.PublicKey)
	want, err2 := x509.MarshalPKIXPublicKey(id.key.Public())
	return err1 == nil && err2 == nil && bytes.Equal(got, want)
}

// clearPending forgets the request in flight once its answer is saved.
func (a *Agent) clearPending() {
	if err := os.Remove(a.files.path(pendingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn("cannot remove the record of the renewal request", "error", err.Error())
	}
}
