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
	"net/url"
	"os"

	"github.com/credo-dev/credo/pkg/enrollapi"
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

// renewalRequest returns the request that renews id and the URI it names.
// With want nil, that is the request recorded in flight for id's
// certificate when there is one (for id's key and workload, in whichever
// identity form it was made), otherwise a new one for id's URI. With want
// set (the server named the URI after a change of the install's identity
// form), it is the recorded request if it names want, otherwise a new one
// for want. A new request is recorded before it is sent.
func (a *Agent) renewalRequest(id *identity, want *url.URL) ([]byte, *url.URL, error) {
	serial := id.leaf.SerialNumber.Text(16)
	if b, err := os.ReadFile(a.files.path(pendingFile)); err == nil {
		var p pendingRenewal
		if json.Unmarshal(b, &p) == nil && p.Serial == serial {
			if uri := a.requestOf(id, []byte(p.CSR)); uri != nil && (want == nil || uri.String() == want.String()) {
				return []byte(p.CSR), uri, nil
			}
		}
	}
	if want == nil {
		want = id.uri()
	}
	csrPEM, err := certificateRequest(id.key, want)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(pendingRenewal{Serial: serial, CSR: string(csrPEM)})
	if err != nil {
		return nil, nil, err
	}
	if err := writeFileAtomic(a.files.dir, pendingFile, append(b, '\n'), publicMode); err != nil {
		return nil, nil, err
	}
	return csrPEM, want, nil
}

// requestOf returns the URI csrPEM asks for when it is a request for id's
// workload (its URI in any form ends in id's UUID) with id's key, or nil.
func (a *Agent) requestOf(id *identity, csrPEM []byte) *url.URL {
	blk, _ := pem.Decode(csrPEM)
	if blk == nil {
		return nil
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil || len(csr.URIs) != 1 {
		return nil
	}
	if uuid, err := enrollapi.WorkloadIDOf(csr.URIs[0]); err != nil || uuid != id.uuid {
		return nil
	}
	got, err1 := x509.MarshalPKIXPublicKey(csr.PublicKey)
	want, err2 := x509.MarshalPKIXPublicKey(id.key.Public())
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
		return nil
	}
	return csr.URIs[0]
}

// clearPending forgets the request in flight once its answer is saved.
func (a *Agent) clearPending() {
	if err := os.Remove(a.files.path(pendingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn("cannot remove the record of the renewal request", "error", err.Error())
	}
}
