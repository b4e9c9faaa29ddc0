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

// Package enrolldriver speaks the enrollment wire protocol (pkg/enrollapi)
// as an agent does, for the tests and benchmarks that drive an enrollment
// server: both enrollment steps with a join token, and renewals by the
// current certificate over a new connection each. A refusal is a *Refusal
// carrying the step and the server's reason, never the token.
package enrolldriver

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Refusal is an answer other than 2xx.
type Refusal struct {
	// Step is "enroll", "certificate" or "renewal".
	Step string
	// Status is the HTTP status.
	Status int
	// Reason is the server's stable reason (enrollapi.Reason*).
	Reason string
}

func (r *Refusal) Error() string { return fmt.Sprintf("%s: %d %s", r.Step, r.Status, r.Reason) }

// Key is how a refusal is counted: step, status and reason; other errors
// (the connection, a malformed answer) are "error".
func Key(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Error()
	}
	return "error"
}

// Agent is a minimal agent: its key, its identity once enrolled and its
// current certificate.
type Agent struct {
	// UUID is the workload's identity, set by Enroll.
	UUID string
	// URI is the workload URI the server named, in the install's identity
	// form; set by Enroll.
	URI   *url.URL
	key   *ecdsa.PrivateKey
	cert  tls.Certificate
	roots *x509.CertPool
	c     *http.Client
}

// NewAgent returns an agent with a new P-256 key that trusts roots.
func NewAgent(roots *x509.CertPool) (*Agent, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Agent{key: key, roots: roots, c: client(roots, nil)}, nil
}

// client returns an HTTP client trusting roots. With a certificate it
// presents it on a new connection each time, as an agent renewing once per
// certificate lifetime does.
func client(roots *x509.CertPool, cert *tls.Certificate) *http.Client {
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	tr := &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 4}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
		tr.DisableKeepAlives = true
	}
	return &http.Client{Timeout: time.Minute, Transport: tr}
}

// Enroll runs both steps against the server at base with token and keeps
// the certificate it is given.
func (a *Agent) Enroll(base, token string) error {
	var reg enrollapi.EnrollResponse
	if err := post(a.c, "enroll", base+enrollapi.PathWorkloads,
		enrollapi.EnrollRequest{Token: token, Hostname: "bench.example.org"}, &reg); err != nil {
		return err
	}
	uri, err := url.Parse(reg.URI)
	if err != nil {
		return fmt.Errorf("the server named the workload URI %q: %w", reg.URI, err)
	}
	csr, err := a.csr(uri)
	if err != nil {
		return err
	}
	a.URI = uri
	var resp enrollapi.CertificateResponse
	if err := post(a.c, "certificate", base+enrollapi.PathCertificate(reg.UUID),
		enrollapi.CertificateRequest{Token: token, CSR: csr}, &resp); err != nil {
		return err
	}
	return a.keep(reg.UUID, resp.Certificate)
}

// Renew renews the agent's certificate with it and keeps the new one.
func (a *Agent) Renew(base string) error {
	csr, err := a.csr(a.URI)
	if err != nil {
		return err
	}
	c := client(a.roots, &a.cert)
	defer c.CloseIdleConnections()
	var resp enrollapi.CertificateResponse
	if err := post(c, "renewal", base+enrollapi.PathRenewal(a.UUID), enrollapi.RenewalRequest{CSR: csr}, &resp); err != nil {
		return err
	}
	return a.keep(a.UUID, resp.Certificate)
}

// Leaf is the agent's current certificate, parsed.
func (a *Agent) Leaf() (*x509.Certificate, error) {
	if len(a.cert.Certificate) == 0 {
		return nil, errors.New("the agent holds no certificate")
	}
	return x509.ParseCertificate(a.cert.Certificate[0])
}

func (a *Agent) csr(uri *url.URL) (string, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader,
		&x509.CertificateRequest{URIs: []*url.URL{uri}}, a.key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

func (a *Agent) keep(id, certPEM string) error {
	blk, _ := pem.Decode([]byte(certPEM))
	if blk == nil {
		return errors.New("no certificate in the answer")
	}
	a.UUID = id
	a.cert = tls.Certificate{Certificate: [][]byte{blk.Bytes}, PrivateKey: a.key}
	return nil
}

// post posts in as JSON and decodes a 2xx answer into out; any other answer
// is a *Refusal.
func post(c *http.Client, step, u string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	resp, err := c.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e enrollapi.Error
		_ = json.Unmarshal(data, &e)
		return &Refusal{Step: step, Status: resp.StatusCode, Reason: e.Reason}
	}
	return json.Unmarshal(data, out)
}
