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
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

func TestWriteFileAtomicReplacesTheFileAndLeavesNoTemporaryFile(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(writeFileAtomic(dir, "key.pem", []byte("one"), 0o600)).To(Succeed())
	g.Expect(writeFileAtomic(dir, "key.pem", []byte("two"), 0o600)).To(Succeed())
	g.Expect(must(os.ReadFile(filepath.Join(dir, "key.pem")))).To(Equal([]byte("two")))
	g.Expect(must(os.Stat(filepath.Join(dir, "key.pem"))).Mode().Perm()).To(Equal(fs.FileMode(0o600)))
	g.Expect(writeFileAtomic(dir, "cert.pem", []byte("c"), 0o644)).To(Succeed())
	g.Expect(must(os.Stat(filepath.Join(dir, "cert.pem"))).Mode().Perm()).To(Equal(fs.FileMode(0o644)))

	// A rename that fails (the target is a non-empty directory) removes
	// the temporary file and leaves the directory as it was.
	g.Expect(os.MkdirAll(filepath.Join(dir, "bundle.pem", "x"), 0o755)).To(Succeed())
	g.Expect(writeFileAtomic(dir, "bundle.pem", []byte("b"), 0o644)).To(MatchError(ContainSubstring("writing bundle.pem")))
	var names []string
	for _, e := range must(os.ReadDir(dir)) {
		names = append(names, e.Name())
	}
	g.Expect(names).To(ConsistOf("key.pem", "cert.pem", "bundle.pem"))
}

func TestCheckCertificateAcceptsOnlyTheWorkloadsOwnCertificate(t *testing.T) {
	ca := newTestCA(t, "enrollment CA")
	other := newTestCA(t, "other CA")
	key := testpki.Key(t)
	otherKey := testpki.Key(t)
	const id = "5b0c8f6e-0d7e-4b43-9a57-3f0e4c9b1a2d"
	now := time.Now()
	tmpl := func(mutate ...func(*x509.Certificate)) *x509.Certificate {
		c := &x509.Certificate{
			NotBefore:   now.Add(-time.Minute),
			NotAfter:    now.Add(time.Hour),
			URIs:        []*url.URL{enrollapi.WorkloadURI(id)},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		}
		for _, m := range mutate {
			m(c)
		}
		return c
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)

	for name, tc := range map[string]struct {
		leaf    *x509.Certificate
		wantErr string
	}{
		"the workload's certificate is accepted": {leaf: ca.sign(t, tmpl(), key.Public())},
		"a clock behind the notBefore does not reject it": {
			leaf: ca.sign(t, tmpl(func(c *x509.Certificate) { c.NotBefore = now.Add(10 * time.Minute) }), key.Public())},
		"another key is refused": {leaf: ca.sign(t, tmpl(), otherKey.Public()), wantErr: "not for the agent's key"},
		"another workload is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) {
			c.URIs = []*url.URL{enrollapi.WorkloadURI("someone-else")}
		}), key.Public()), wantErr: "does not name exactly"},
		"a second URI is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) {
			c.URIs = append(c.URIs, &url.URL{Scheme: "spiffe", Host: "x", Path: "/y"})
		}), key.Public()), wantErr: "does not name exactly"},
		"a DNS name is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) { c.DNSNames = []string{"vm-1"} }), key.Public()),
			wantErr: "does not name exactly"},
		"an IP address is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) { c.IPAddresses = []net.IP{net.IPv4(10, 0, 0, 1)} }), key.Public()),
			wantErr: "does not name exactly"},
		"an expired certificate is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(-2*time.Hour), now.Add(-time.Hour)
		}), key.Public()), wantErr: "expired"},
		"a certificate of a CA outside the bundle is refused": {leaf: other.sign(t, tmpl(), key.Public()),
			wantErr: "does not chain to the bundle"},
		"a certificate without client authentication is refused": {leaf: ca.sign(t, tmpl(func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		}), key.Public()), wantErr: "does not chain to the bundle"},
	} {
		t.Run(name, func(t *testing.T) {
			err := checkCertificate(tc.leaf, nil, roots, key.Public(), enrollapi.WorkloadURI(id), now)
			if tc.wantErr == "" {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestWhichFailuresAreRetried(t *testing.T) {
	status := func(code int, reason string) error {
		se := &StatusError{StatusCode: code}
		if reason != "" {
			se.API = &enrollapi.Error{Reason: reason, Message: "m"}
		}
		return fmt.Errorf("wrapped: %w", se)
	}
	verification := fmt.Errorf("Post: %w", &ServerVerificationError{Err: errors.New("x509: unknown authority")})
	for name, tc := range map[string]struct {
		err                          error
		atRenewal, atEnrollment, new bool
	}{
		"a network error":               {err: errors.New("connection refused"), atRenewal: true, atEnrollment: true},
		"a 503":                         {err: status(503, enrollapi.ReasonSigningUnavailable), atRenewal: true, atEnrollment: true},
		"a 502 without a body":          {err: status(502, ""), atRenewal: true, atEnrollment: true},
		"a 429":                         {err: status(429, enrollapi.ReasonRateLimited), atRenewal: true, atEnrollment: true},
		"a bad request":                 {err: status(400, enrollapi.ReasonCSRInvalid)},
		"an invalid token":              {err: status(403, enrollapi.ReasonTokenInvalid)},
		"a deleted workload":            {err: status(404, enrollapi.ReasonWorkloadNotFound), new: true},
		"an older certificate":          {err: status(409, enrollapi.ReasonNotCurrent), new: true},
		"the grace is over":             {err: status(403, enrollapi.ReasonRenewalGraceOver), new: true},
		"a revoked policy":              {err: status(403, enrollapi.ReasonPolicyRevoked), new: true},
		"a server that does not verify": {err: verification, atRenewal: true},
	} {
		g := NewWithT(t)
		g.Expect(transient(tc.err)).To(Equal(tc.atRenewal), name)
		g.Expect(transientAtEnrollment(tc.err)).To(Equal(tc.atEnrollment), name)
		g.Expect(needsReenrollment(tc.err)).To(Equal(tc.new), name)
	}
}

func TestAServerOutsideTheCAFileFailsEnrollmentAtOnce(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	wrong := newTestCA(t, "not the enrollment CA").writeFile(t)
	a := must(New(h.config(func(c *Config) { c.CAFile = wrong })))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.Run(ctx)
	var ve *ServerVerificationError
	g.Expect(errors.As(err, &ve)).To(BeTrue(), "%v", err)
	g.Expect(ctx.Err()).NotTo(HaveOccurred())
	enrolls, _, _ := h.srv.snapshot()
	g.Expect(enrolls).To(BeEmpty())
}

func TestAnAnswerThatIsNotAnAPIErrorKeepsItsStatus(t *testing.T) {
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	a := must(New(h.config()))
	err := a.client.postJSON(context.Background(), "/v1/nowhere", struct{}{}, &struct{}{})
	var se *StatusError
	g.Expect(errors.As(err, &se)).To(BeTrue(), "%v", err)
	g.Expect(se.StatusCode).To(Equal(http.StatusNotFound))
	g.Expect(se.API).To(BeNil())
	var apiErr *enrollapi.Error
	g.Expect(errors.As(err, &apiErr)).To(BeFalse())
	g.Expect(err.Error()).To(Equal("the enrollment server answered 404 Not Found"))
}

func TestCheckRegistrationRefusesAnUnusableIdentity(t *testing.T) {
	g := NewWithT(t)
	const id = "5b0c8f6e-0d7e-4b43-9a57-3f0e4c9b1a2d"
	uri := must(checkRegistration(&enrollapi.EnrollResponse{UUID: id, URI: "credo://workload/" + id}))
	g.Expect(uri.String()).To(Equal("credo://workload/" + id))
	for _, bad := range []enrollapi.EnrollResponse{
		{UUID: ""},
		{UUID: "a/b"},
		{UUID: "a?b"},
		{UUID: "../x"},
		{UUID: id, URI: "credo://workload/another"},
	} {
		_, err := checkRegistration(&bad)
		g.Expect(err).To(HaveOccurred(), "%+v", bad)
	}
}

func TestTheServerURLMayEndWithASlash(t *testing.T) {
	h := newHarness(t, time.Hour, time.Hour)
	a := must(New(h.config(func(c *Config) { c.Server += "/" })))
	NewWithT(t).Expect(a.client.url(enrollapi.PathBundle)).To(Equal(h.srv.srv.URL + enrollapi.PathBundle))
}
