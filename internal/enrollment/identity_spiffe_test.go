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

package enrollment_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"

	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// spiffeForm is the form of the tests' SPIFFE installs.
var spiffeForm = enrollapi.IdentityForm{Scheme: enrollapi.SchemeSPIFFE, TrustDomain: "credo.test"}

func withIdentity(form enrollapi.IdentityForm) func(*serverSetup) {
	return func(s *serverSetup) { s.opts.Identity = form }
}

// newEmbeddedCA builds the embedded CA as cmd/enrollment-controller does
// (controllers/enrollment.NewEmbeddedCA calls embedded.New), with its
// Secret in a namespace of its own, and creates the Secret.
func newEmbeddedCA(t *testing.T) *embedded.CA {
	t.Helper()
	opts := embedded.NewOptions()
	opts.Namespace = env.NewNamespace(t)
	authority, err := embedded.New(opts, k8s, k8s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := authority.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return authority
}

func TestASpiffeFormURIIsASpiffeID(t *testing.T) {
	g := NewWithT(t)
	const id = "0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60"
	uri := spiffeForm.URI(id)
	sid, err := spiffeid.FromURI(uri)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sid.TrustDomain().Name()).To(Equal(spiffeForm.TrustDomain))
	g.Expect(sid.Path()).To(Equal("/workload/" + id))
	g.Expect(sid.URL().String()).To(Equal(uri.String()))
	back, err := spiffeForm.Parse(sid.URL())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back).To(Equal(id))
	// Every trust domain Validate accepts is one SPIFFE accepts.
	for _, td := range []string{"a", "example.org", "prod_1-eu.example", "0.0"} {
		_, err := spiffeid.TrustDomainFromString(td)
		g.Expect(err).NotTo(HaveOccurred(), td)
		g.Expect(enrollapi.IdentityForm{Scheme: enrollapi.SchemeSPIFFE, TrustDomain: td}.Validate()).To(Succeed(), td)
	}
}

// Enrolled and renewed through the enrollment server, signed by the
// embedded CA, a workload's certificate is an X.509-SVID of the install's
// trust domain.
func TestASpiffeFormCertificateIsAnX509SVIDOfTheTrustDomain(t *testing.T) {
	g := NewWithT(t)
	authority := newEmbeddedCA(t)
	base := startServer(t, withCA(authority), withIdentity(spiffeForm))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)

	// The form is published, unauthenticated.
	resp, err := httpClient(nil).Get(base + enrollapi.PathIdentity)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	var published enrollapi.IdentityForm
	g.Expect(json.NewDecoder(resp.Body).Decode(&published)).To(Succeed())
	g.Expect(published).To(Equal(spiffeForm))

	w := enroll(t, base, token, nil)
	want := "spiffe://credo.test/workload/" + w.uuid
	g.Expect(w.uri.String()).To(Equal(want), "step 1 names the SPIFFE ID")
	g.Expect(w.resp.URI).To(Equal(want))

	caPEM, err := authority.Bundle(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	td := spiffeid.RequireTrustDomainFromString(spiffeForm.TrustDomain)
	bundle := x509bundle.FromX509Authorities(td, parseCerts(t, caPEM))
	sid, chains, err := x509svid.Verify(certChain(t, w.resp), bundle)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(chains).NotTo(BeEmpty())
	g.Expect(sid.String()).To(Equal(want))
	// Issued for another trust domain, the bundle does not apply.
	other := x509bundle.FromX509Authorities(spiffeid.RequireTrustDomainFromString("other.test"), parseCerts(t, caPEM))
	_, _, err = x509svid.Verify(certChain(t, w.resp), other)
	g.Expect(err).To(HaveOccurred())

	g.Expect(getWorkload(t, ns, w.uuid).Status.URI).To(Equal(want))

	// A renewal in the SPIFFE form gets the same SPIFFE ID.
	status, e, renewed := renew(t, base, w, w.tlsCert())
	g.Expect(e).To(BeNil(), "renewal: %d %v", status, e)
	g.Expect(renewed.URI).To(Equal(want))
	sid, _, err = x509svid.Verify(certChain(t, *renewed), bundle)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sid.String()).To(Equal(want))
	g.Expect(parseCert(t, renewed.Certificate).SerialNumber).NotTo(Equal(w.cert.SerialNumber))
}

// certChain parses a certificate answer's leaf and chain.
func certChain(t *testing.T, resp enrollapi.CertificateResponse) []*x509.Certificate {
	t.Helper()
	return parseCerts(t, []byte(resp.Certificate+resp.Chain))
}

// parseCerts parses PEM certificates, at least one.
func parseCerts(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		if blk, data = pem.Decode(data); blk == nil {
			break
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatal("no PEM certificate")
	}
	return out
}
