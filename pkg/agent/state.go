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
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Names of the files in the state directory.
const (
	keyFile    = "key.pem"
	certFile   = "cert.pem"
	bundleFile = "bundle.pem"
	stateFile  = "state.json"

	keyMode    fs.FileMode = 0o600
	publicMode fs.FileMode = 0o644
)

// files locates the state directory's files.
type files struct{ dir string }

func (f files) path(name string) string { return filepath.Join(f.dir, name) }

// identity is the workload's current certificate and key.
type identity struct {
	uuid    string
	cert    tls.Certificate // the leaf then its intermediates, with Leaf and PrivateKey
	leaf    *x509.Certificate
	key     crypto.Signer
	grace   time.Duration
	renewAt time.Time // drawn once per certificate
	// labels and hostname are the workload's attributes as the registry
	// answered them with this certificate.
	labels   map[string]string
	hostname string
}

// uri is the certificate's one URI SAN, in the install's identity form when
// it was issued.
func (id *identity) uri() *url.URL { return id.leaf.URIs[0] }

// deadline is the end of the renewal grace.
func (id *identity) deadline() time.Time { return id.leaf.NotAfter.Add(id.grace) }

func (a *Agent) newIdentity(uuid string, cert tls.Certificate, key crypto.Signer, grace time.Duration) *identity {
	return &identity{
		uuid:    uuid,
		cert:    cert,
		leaf:    cert.Leaf,
		key:     key,
		grace:   grace,
		renewAt: RenewAt(cert.Leaf.NotBefore, cert.Leaf.NotAfter, a.jitter()),
	}
}

// trust is the bundle last received and the roots that verify the server.
type trust struct {
	bundlePEM []byte         // canonical PEM; nil before the first bundle
	bundle    *x509.CertPool // the bundle alone
	roots     *x509.CertPool // the CA file and the bundle
}

func (a *Agent) newTrust(bundlePEM []byte, bundle []*x509.Certificate) *trust {
	t := &trust{bundlePEM: bundlePEM, bundle: x509.NewCertPool(), roots: x509.NewCertPool()}
	for _, c := range a.caCerts {
		t.roots.AddCert(c)
	}
	for _, c := range bundle {
		t.bundle.AddCert(c)
		t.roots.AddCert(c)
	}
	return t
}

// state is state.json: what the certificate does not say.
type state struct {
	// UUID of the workload the files belong to.
	UUID string `json:"uuid"`
	// RenewalGraceSeconds is the grace the server announced with the certificate.
	RenewalGraceSeconds int64 `json:"renewalGraceSeconds"`
	// ReenrollmentReason is set when the server refused the certificate for
	// good: it is not used again, and a restart needs a token.
	ReenrollmentReason string `json:"reenrollmentReason,omitempty"`
	// ReenrollmentMessage is the server's explanation.
	ReenrollmentMessage string `json:"reenrollmentMessage,omitempty"`
	// Labels and Hostname are the workload's attributes as the registry
	// answered them with the certificate.
	Labels   map[string]string `json:"labels,omitempty"`
	Hostname string            `json:"hostname,omitempty"`
}

// loadBundle reads bundle.pem into the trust, if there is one.
func (a *Agent) loadBundle() error {
	b, err := os.ReadFile(a.files.path(bundleFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	certs, err := parseCertificates(b)
	if err != nil {
		return err
	}
	a.trust.Store(a.newTrust(encodeCertificates(certs), certs))
	return nil
}

// loadIdentity reads the key, certificate and state files. It returns no
// identity when they are absent or unusable, saying why in the log.
func (a *Agent) loadIdentity() (*identity, state) {
	var st state
	if b, err := os.ReadFile(a.files.path(stateFile)); err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			a.log.Warn("ignoring an unreadable state file", "file", a.files.path(stateFile), "error", err)
			st = state{}
		}
	}
	certPEM, certErr := os.ReadFile(a.files.path(certFile))
	keyPEM, keyErr := os.ReadFile(a.files.path(keyFile))
	if errors.Is(certErr, fs.ErrNotExist) || errors.Is(keyErr, fs.ErrNotExist) {
		return nil, st
	}
	if err := errors.Join(certErr, keyErr); err != nil {
		a.log.Warn("cannot read the certificate or key on disk", "error", err)
		return nil, st
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error names the mismatch or the bad block, never key material.
		a.log.Warn("the certificate and key on disk are unusable", "dir", a.files.dir, "error", err)
		return nil, st
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || len(pair.Leaf.URIs) != 1 {
		a.log.Warn("the certificate on disk is not a workload certificate", "file", a.files.path(certFile))
		return nil, st
	}
	// The agent is not told the install's identity form: any URI ending in
	// a workload UUID is the certificate's, and names the state's workload.
	uuid, err := enrollapi.WorkloadIDOf(pair.Leaf.URIs[0])
	if err != nil {
		a.log.Warn("the certificate on disk is not a workload certificate", "file", a.files.path(certFile), "error", err)
		return nil, st
	}
	if st.UUID != uuid {
		a.log.Warn("the state file belongs to another workload; ignoring it", "uuid", uuid, "stateUUID", st.UUID)
		st = state{UUID: uuid}
	}
	if fi, err := os.Stat(a.files.path(keyFile)); err == nil && fi.Mode().Perm()&0o077 != 0 {
		a.log.Warn("the key file is readable by others than its owner", "file", a.files.path(keyFile), "mode", fi.Mode().Perm().String())
	}
	grace := time.Duration(max(st.RenewalGraceSeconds, 0)) * time.Second
	id := a.newIdentity(uuid, pair, key, grace)
	id.labels, id.hostname = st.Labels, st.Hostname
	return id, st
}

// save writes a new certificate (and the key, after an enrollment, and the
// bundle, when it changed), then makes it current.
func (a *Agent) save(id *identity, writeKey bool, tr *trust) (Update, error) {
	u := Update{Certificate: true}
	if writeKey {
		der, err := x509.MarshalPKCS8PrivateKey(id.key)
		if err != nil {
			return Update{}, fmt.Errorf("encoding the private key: %w", err)
		}
		keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		if err := writeFileAtomic(a.files.dir, keyFile, keyPEM, keyMode); err != nil {
			return Update{}, err
		}
	}
	// The bundle goes first, so that the CA of the new certificate is
	// trusted by whoever reads the files before the certificate appears.
	if !bytes.Equal(tr.bundlePEM, a.trust.Load().bundlePEM) {
		if err := writeFileAtomic(a.files.dir, bundleFile, tr.bundlePEM, publicMode); err != nil {
			return Update{}, err
		}
		u.Bundle = true
	}
	var certPEM []byte
	for _, der := range id.cert.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := writeFileAtomic(a.files.dir, certFile, certPEM, publicMode); err != nil {
		return Update{}, err
	}
	if err := a.writeState(state{UUID: id.uuid, RenewalGraceSeconds: int64(id.grace / time.Second),
		Labels: id.labels, Hostname: id.hostname}); err != nil {
		return Update{}, err
	}
	if prev := a.identity.Load(); (prev == nil && (len(id.labels) > 0 || id.hostname != "")) ||
		(prev != nil && (!maps.Equal(prev.labels, id.labels) || prev.hostname != id.hostname)) {
		u.Attributes = true
	}
	if u.Bundle {
		a.trust.Store(tr)
	}
	a.identity.Store(id)
	return u, nil
}

// saveBundle writes a changed bundle and makes it current.
func (a *Agent) saveBundle(tr *trust) error {
	if err := writeFileAtomic(a.files.dir, bundleFile, tr.bundlePEM, publicMode); err != nil {
		return err
	}
	a.trust.Store(tr)
	return nil
}

// markReenrollment records that the certificate on disk was refused for good.
func (a *Agent) markReenrollment(id *identity, reason, message string) {
	st := state{UUID: id.uuid, RenewalGraceSeconds: int64(id.grace / time.Second),
		ReenrollmentReason: reason, ReenrollmentMessage: message, Labels: id.labels, Hostname: id.hostname}
	if err := a.writeState(st); err != nil {
		a.log.Error("cannot record that re-enrollment is required", "error", err)
	}
}

func (a *Agent) writeState(st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(a.files.dir, stateFile, append(b, '\n'), publicMode)
}

// writeFileAtomic replaces dir/name with data: a temporary file in dir is
// written, synced and renamed over the target, then dir is synced. The
// temporary file is removed on failure.
func writeFileAtomic(dir, name string, data []byte, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", name, err)
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// parseCertificates parses PEM certificates; any other block, or none at all, is an error.
func parseCertificates(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("unexpected PEM block %q where certificates were expected", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing a certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(bytes.TrimSpace(b)) != 0 {
		return nil, errors.New("trailing data after the PEM certificates")
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// encodeCertificates returns the canonical PEM of certs, so that bundles
// compare equal when they hold the same certificates in the same order.
func encodeCertificates(certs []*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}
