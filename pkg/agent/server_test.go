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
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// testCA is a CA made for one test.
type testCA struct {
	ca   *testpki.Cert
	cert *x509.Certificate
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	ca := testpki.Authority(t, name, testpki.NotAfter(time.Now().Add(24*time.Hour)))
	return &testCA{ca: ca, cert: ca.Cert, pem: ca.CertPEM()}
}

// sign issues a certificate from tmpl for pub.
func (ca *testCA) sign(t *testing.T, tmpl *x509.Certificate, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	return must(ca.ca.NewLeaf(testpki.PublicKey(pub), testpki.Template(func(c *x509.Certificate) { *c = *tmpl }))).Cert
}

// servingCert is a certificate for 127.0.0.1, as the enrollment server has.
func (ca *testCA) servingCert(t *testing.T) *tls.Certificate {
	t.Helper()
	c := testpki.Leaf(t, ca.ca, testpki.Serving(), testpki.Subject(pkix.Name{CommonName: "enrollment"}))
	cert := c.TLS()
	return &cert
}

func (ca *testCA) writeFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// must returns v, or panics on err: for fixtures, where a failure is a bug of the test.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// renewalSeen is one renewal request the fake server answered.
type renewalSeen struct {
	at        time.Time
	presented *x509.Certificate
	csr       *x509.CertificateRequest
	// csrPEM is the request as sent, whatever the answer.
	csrPEM string
	status int
}

// fakeServer implements the wire protocol minimally, as the enrollment
// server would: one token, workloads in memory, certificates of ttl.
type fakeServer struct {
	t     *testing.T
	srv   *httptest.Server
	token string

	serving atomic.Pointer[tls.Certificate]

	mu            sync.Mutex
	signer        *testCA
	bundle        []byte
	ttl, grace    time.Duration
	current       map[string]*big.Int // uuid → serial of its current certificate
	enrolls       []enrollapi.EnrollRequest
	csrs          []*x509.CertificateRequest
	renewals      []renewalSeen
	renewFailures int              // answer 503 to this many renewals
	renewRefusal  *enrollapi.Error // answer 404 with this to renewals
	bundleGets    int
	// labels and hostname are the attributes answered with each certificate.
	labels   map[string]string
	hostname string
	// form writes workload URIs; a renewal asking for another form's is
	// answered IdentityChanged. The default form when zero.
	form enrollapi.IdentityForm
	// unavailableFor answers 503 to the renewal requests it accepts.
	unavailableFor func(*x509.CertificateRequest) bool
}

const testToken = "tok1." + "s3cr3t-join-secret"

func newFakeServer(t *testing.T, ca *testCA, ttl, grace time.Duration) *fakeServer {
	t.Helper()
	s := &fakeServer{t: t, token: testToken, signer: ca, bundle: ca.pem, ttl: ttl, grace: grace,
		current: map[string]*big.Int{}}
	s.serving.Store(ca.servingCert(t))
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+enrollapi.PathWorkloads, s.enroll)
	mux.HandleFunc("POST "+enrollapi.PathWorkloads+"/{uuid}/certificate", s.certificate)
	mux.HandleFunc("POST "+enrollapi.PathWorkloads+"/{uuid}/renewal", s.renew)
	mux.HandleFunc("GET "+enrollapi.PathBundle, s.getBundle)
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Config.ErrorLog = discardLog() // refused handshakes are part of some tests
	s.srv.TLS = &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Called on every handshake, so that the serving certificate can rotate.
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{*s.serving.Load()},
				ClientAuth:   tls.RequestClientCert,
			}, nil
		},
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeServer) fail(w http.ResponseWriter, status int, reason, format string, args ...any) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	reply(w, status, &enrollapi.Error{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *fakeServer) enroll(w http.ResponseWriter, r *http.Request) {
	var req enrollapi.EnrollRequest
	if err := decodeStrict(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, enrollapi.ReasonBadRequest, "bad body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Token != s.token {
		s.fail(w, http.StatusForbidden, enrollapi.ReasonTokenInvalid, "the token is unknown or its secret is wrong")
		return
	}
	s.enrolls = append(s.enrolls, req)
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	s.current[id] = nil
	reply(w, http.StatusCreated, &enrollapi.EnrollResponse{UUID: id, Namespace: "tenant", URI: s.form.URI(id).String()})
}

func (s *fakeServer) certificate(w http.ResponseWriter, r *http.Request) {
	var req enrollapi.CertificateRequest
	if err := decodeStrict(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, enrollapi.ReasonBadRequest, "bad body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("uuid")
	if _, ok := s.current[id]; !ok || req.Token != s.token {
		s.fail(w, http.StatusForbidden, enrollapi.ReasonTokenInvalid, "no such registration for this token")
		return
	}
	csr, ok := s.parseCSR(w, req.CSR)
	if !ok {
		return
	}
	reply(w, http.StatusOK, s.issue(id, csr.PublicKey))
}

func (s *fakeServer) renew(w http.ResponseWriter, r *http.Request) {
	seen := renewalSeen{at: time.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.renewals = append(s.renewals, seen) }()
	var req enrollapi.RenewalRequest
	if err := decodeStrict(r, &req); err != nil {
		seen.status = http.StatusBadRequest
		s.fail(w, seen.status, enrollapi.ReasonBadRequest, "bad body")
		return
	}
	seen.csrPEM = req.CSR
	if len(r.TLS.PeerCertificates) > 0 {
		seen.presented = r.TLS.PeerCertificates[0]
	}
	switch {
	case s.renewFailures > 0:
		s.renewFailures--
		seen.status = http.StatusServiceUnavailable
		s.fail(w, seen.status, enrollapi.ReasonSigningUnavailable, "the CA is down; retry later")
		return
	case s.renewRefusal != nil:
		seen.status = http.StatusNotFound
		reply(w, seen.status, s.renewRefusal)
		return
	case seen.presented == nil:
		seen.status = http.StatusUnauthorized
		s.fail(w, seen.status, enrollapi.ReasonUnauthenticated, "no client certificate")
		return
	}
	id := r.PathValue("uuid")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.bundle)
	_, err := seen.presented.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: seen.presented.NotBefore,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil || len(seen.presented.URIs) != 1 || !namesWorkload(seen.presented.URIs[0], id) {
		seen.status = http.StatusUnauthorized
		s.fail(w, seen.status, enrollapi.ReasonUnauthenticated, "the client certificate is not this workload's")
		return
	}
	if cur := s.current[id]; cur == nil || cur.Cmp(seen.presented.SerialNumber) != 0 {
		seen.status = http.StatusConflict
		s.fail(w, seen.status, enrollapi.ReasonNotCurrent, "not the current certificate")
		return
	}
	if seen.at.After(seen.presented.NotAfter.Add(s.grace)) {
		seen.status = http.StatusForbidden
		s.fail(w, seen.status, enrollapi.ReasonRenewalGraceOver, "the grace is over")
		return
	}
	csr, ok := s.parseCSR(w, req.CSR)
	if !ok {
		seen.status = http.StatusBadRequest
		return
	}
	seen.csr = csr
	if s.unavailableFor != nil && s.unavailableFor(csr) {
		seen.status = http.StatusServiceUnavailable
		s.fail(w, seen.status, enrollapi.ReasonSigningUnavailable, "the CA is down; retry later")
		return
	}
	if want := s.form.URI(id); len(csr.URIs) != 1 || csr.URIs[0].String() != want.String() {
		seen.status = http.StatusConflict
		reply(w, seen.status, &enrollapi.Error{Reason: enrollapi.ReasonIdentityChanged, Message: "the form changed", URI: want.String()})
		return
	}
	seen.status = http.StatusOK
	reply(w, http.StatusOK, s.issue(id, csr.PublicKey))
}

// namesWorkload reports whether u is id's workload URI in any form.
func namesWorkload(u *url.URL, id string) bool {
	_, got, err := enrollapi.FormOf(u)
	return err == nil && got == id
}

func (s *fakeServer) getBundle(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bundleGets++
	w.Header().Set("Content-Type", "application/x-pem-file")
	_, _ = w.Write(s.bundle)
}

func (s *fakeServer) parseCSR(w http.ResponseWriter, csrPEM string) (*x509.CertificateRequest, bool) {
	block, _ := pem.Decode([]byte(csrPEM))
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		s.fail(w, http.StatusBadRequest, enrollapi.ReasonCSRInvalid, "no CSR")
		return nil, false
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || csr.CheckSignature() != nil {
		s.fail(w, http.StatusBadRequest, enrollapi.ReasonCSRInvalid, "bad CSR")
		return nil, false
	}
	s.csrs = append(s.csrs, csr)
	return csr, true
}

// issue signs a certificate of ttl whose only SAN is the workload URI; the
// caller holds s.mu.
func (s *fakeServer) issue(id string, pub crypto.PublicKey) *enrollapi.CertificateResponse {
	nb := time.Now().Truncate(time.Second)
	c := s.signer.sign(s.t, &x509.Certificate{
		NotBefore:   nb,
		NotAfter:    nb.Add(s.ttl),
		URIs:        []*url.URL{s.form.URI(id)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}, pub)
	s.current[id] = c.SerialNumber
	return &enrollapi.CertificateResponse{
		UUID:                id,
		URI:                 s.form.URI(id).String(),
		Certificate:         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})),
		Bundle:              string(s.bundle),
		NotAfter:            c.NotAfter.Format(time.RFC3339),
		RenewalGraceSeconds: int64(s.grace / time.Second),
		Labels:              maps.Clone(s.labels),
		Hostname:            s.hostname,
	}
}

// set changes the server under the lock.
func (s *fakeServer) set(f func(s *fakeServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// snapshot reads the server under the lock.
func (s *fakeServer) snapshot() (enrolls []enrollapi.EnrollRequest, csrs []*x509.CertificateRequest, renewals []renewalSeen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]enrollapi.EnrollRequest(nil), s.enrolls...), append([]*x509.CertificateRequest(nil), s.csrs...), append([]renewalSeen(nil), s.renewals...)
}

// okRenewals returns the renewals that succeeded.
func (s *fakeServer) okRenewals() []renewalSeen {
	_, _, all := s.snapshot()
	var ok []renewalSeen
	for _, r := range all {
		if r.status == http.StatusOK {
			ok = append(ok, r)
		}
	}
	return ok
}

func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
