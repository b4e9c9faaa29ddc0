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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// maxResponseBytes bounds what is read of an answer.
const maxResponseBytes = 1 << 20

// StatusError is an answer of the enrollment server other than 2xx. It
// unwraps to the *enrollapi.Error of the body when there was one.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// RetryAfter is the server's Retry-After, zero when absent.
	RetryAfter time.Duration
	// API is the decoded body; nil when the body was not an enrollapi.Error.
	API *enrollapi.Error
}

func (e *StatusError) Error() string {
	if e.API == nil {
		return fmt.Sprintf("the enrollment server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("the enrollment server answered %d: %s", e.StatusCode, e.API.Error())
}

// Unwrap returns the *enrollapi.Error, if any.
func (e *StatusError) Unwrap() error {
	if e.API == nil {
		return nil
	}
	return e.API
}

// transient reports whether err may pass by itself: a network error, a 5xx,
// a 429, or a reason saying so. During a renewal, a server certificate that
// does not verify is one too: a bundle poll or a server fix may cure it
// before the grace ends.
func transient(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return true // no answer: network, TLS or a malformed response
	}
	if se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests {
		return true
	}
	return se.API != nil && (se.API.Reason == enrollapi.ReasonRateLimited || se.API.Reason == enrollapi.ReasonSigningUnavailable)
}

// transientAtEnrollment is transient, except that a server certificate that
// does not verify fails at once: the CA file is probably wrong.
func transientAtEnrollment(err error) bool {
	var ve *ServerVerificationError
	return transient(err) && !errors.As(err, &ve)
}

// needsReenrollment reports whether err is a refusal only a new enrollment cures.
func needsReenrollment(err error) bool {
	var apiErr *enrollapi.Error
	return errors.As(err, &apiErr) && apiErr.NeedsReenrollment()
}

// client talks to the enrollment server, verifying it against the current
// trust and presenting the current certificate when there is one.
type client struct {
	a    *Agent
	http *http.Client
}

func newClient(a *Agent) *client {
	tr := &http.Transport{
		TLSClientConfig:     a.TLSConfig(a.server.Hostname()),
		TLSHandshakeTimeout: 10 * time.Second,
		// A new connection for each request, so that the certificate
		// presented is always the current one.
		DisableKeepAlives: true,
		ForceAttemptHTTP2: false,
	}
	return &client{a: a, http: &http.Client{Transport: tr, Timeout: a.cfg.RequestTimeout}}
}

// postJSON POSTs in as JSON to path and decodes a 2xx answer into out.
func (c *client) postJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(path), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	b, err := c.do(req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decoding the answer to %s: %w", path, err)
	}
	return nil
}

// getBundle fetches the trust bundle.
func (c *client) getBundle(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(enrollapi.PathBundle), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/x-pem-file")
	return c.do(req)
}

func (c *client) url(path string) string {
	u := *c.a.server
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	return u.String()
}

// do sends req and returns the body of a 2xx answer, or a *StatusError.
func (c *client) do(req *http.Request) ([]byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("reading the answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return b, nil
	}
	se := &StatusError{StatusCode: resp.StatusCode}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		se.RetryAfter = time.Duration(s) * time.Second
	}
	var apiErr enrollapi.Error
	if json.Unmarshal(b, &apiErr) == nil && apiErr.Reason != "" {
		se.API = &apiErr
	}
	return nil, se
}

// TLSConfig returns a client configuration for programs that embed the
// agent: it presents the workload's current certificate and verifies
// servers against the CA file and the current bundle, both following
// renewals and bundle changes without rebuilding the config. The server's
// certificate must name serverName or, when it is empty, the server name the
// connection carries (TLS records none for an IP address: pass it then).
// Standard verification is replaced by VerifyConnection only so that the
// roots can change; it checks the chain, the validity and the name.
func (a *Agent) TLSConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion:           tls.VersionTLS12,
		GetClientCertificate: a.getClientCertificate,
		// Verification happens in VerifyConnection against the current roots.
		InsecureSkipVerify: true, //nolint:gosec // see VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			name := serverName
			if name == "" {
				name = cs.ServerName
			}
			return a.verifyServer(cs, name)
		},
	}
}

// ServerTLSConfig returns a server configuration for programs that embed
// the agent and authenticate their peers by workload certificates (a
// relying service, with pkg/lookup to authorize them): it presents the
// workload's current certificate and requires a client certificate that
// verifies against the current bundle (not the CA file, which only
// verifies the enrollment server), both following renewals and bundle
// changes. Before enrollment it presents nothing, and no handshake
// succeeds.
func (a *Agent) ServerTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			id, tr := a.identity.Load(), a.trust.Load()
			if id == nil || tr == nil || tr.bundlePEM == nil {
				return nil, errors.New("the workload holds no certificate yet")
			}
			cert := id.cert
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{cert},
				ClientCAs:    tr.bundle,
				ClientAuth:   tls.RequireAndVerifyClientCert,
			}, nil
		},
	}
}

// CurrentCertificate returns the workload's current certificate and key,
// or an error before enrollment: pkg/lookup's ClientCertificate.
func (a *Agent) CurrentCertificate() (*tls.Certificate, error) {
	id := a.identity.Load()
	if id == nil {
		return nil, errors.New("the workload holds no certificate yet")
	}
	cert := id.cert
	return &cert, nil
}

// getClientCertificate presents the current certificate, even expired (a
// renewal within the grace needs it), or none before enrollment.
func (a *Agent) getClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if id := a.identity.Load(); id != nil {
		return &id.cert, nil
	}
	return &tls.Certificate{}, nil
}

func (a *Agent) verifyServer(cs tls.ConnectionState, name string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server presented no certificate")
	}
	if name == "" {
		return errors.New("no server name to verify the server's certificate against")
	}
	opts := x509.VerifyOptions{
		DNSName:       name,
		Roots:         a.trust.Load().roots,
		Intermediates: x509.NewCertPool(),
	}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return &ServerVerificationError{Err: err}
	}
	return nil
}

// ServerVerificationError says that a server's certificate did not verify
// against the CA file and the bundle.
type ServerVerificationError struct {
	// Err is the x509 verification error.
	Err error
}

func (e *ServerVerificationError) Error() string {
	return "verifying the server's certificate: " + e.Err.Error()
}

// Unwrap returns the x509 error.
func (e *ServerVerificationError) Unwrap() error { return e.Err }

// Attributes returns the workload's labels and hostname as the registry
// answered them with the current certificate (nil and "" before the first
// one): a service embedding the agent reads what its workload is labelled
// now. They change without re-enrollment and reach the agent at its next
// renewal (Update.Attributes); its certificate carries none of them.
func (a *Agent) Attributes() (labels map[string]string, hostname string) {
	id := a.identity.Load()
	if id == nil {
		return nil, ""
	}
	return maps.Clone(id.labels), id.hostname
}
