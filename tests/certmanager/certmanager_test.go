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

package certmanager

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/testpki"
)

// issuerArgs are the flags that sign through the CA Issuer name of ns,
// whose CA Secret secretName holds the bundle.
func issuerArgs(ns, name, secretName string, extra ...string) []string {
	return append([]string{"--cert-manager-namespace=" + ns, "--cert-manager-issuer-name=" + name,
		"--cert-manager-bundle-name=" + secretName}, extra...)
}

// An agent enrolls and renews with certificates cert-manager's CA issuer
// signs, each approved by cert-manager's approver, carrying the workload
// URI alone; the requests are gone afterwards.
func TestAgentsEnrollAndRenewWithCertificatesSignedByCertManager(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	authority := readyIssuer(t, ns)
	c := startController(t, ns, issuerArgs(ns, "ca", "issuer-ca"), nil)
	token := newToken(t, ns)

	agent, err := enrolldriver.NewAgent(c.roots)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(agent.Enroll(c.base, token)).To(Succeed())
	first := leafOf(g, agent)
	verifiesAgainst(g, first, authority)
	g.Expect(first.URIs).To(HaveLen(1))
	g.Expect(first.URIs[0].String()).To(Equal(agent.URI.String()))
	g.Expect(first.DNSNames).To(BeEmpty())

	g.Expect(agent.Renew(c.base)).To(Succeed())
	renewed := leafOf(g, agent)
	verifiesAgainst(g, renewed, authority)
	g.Expect(renewed.SerialNumber).NotTo(Equal(first.SerialNumber), "a new certificate")
	g.Expect(renewed.URIs[0].String()).To(Equal(agent.URI.String()))

	// cert-manager's approver approved both requests (its Event on each),
	// and the CA deleted them once answered.
	g.Eventually(func() int {
		var events corev1.EventList
		g.Expect(env.Client.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		n := 0
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "CertificateRequest" && e.Reason == "cert-manager.io" &&
				e.Message == "Certificate request has been approved by cert-manager.io" {
				n++
			}
		}
		return n
	}, 20*time.Second, 200*time.Millisecond).Should(Equal(2), "approved by cert-manager's approver")
	g.Eventually(func() int { return len(certificateRequests(g, ns)) }, 10*time.Second).Should(BeZero())
}

// A certificate request naming another URI SAN than the workload's is
// refused by the enrollment server (CSRInvalid) before any
// CertificateRequest is made; the registration is not lost: a request for
// the right URI then gets its certificate.
func TestARequestForAnotherURIIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	authority := readyIssuer(t, ns)
	c := startController(t, ns, issuerArgs(ns, "ca", "issuer-ca"), nil)
	token := newToken(t, ns)

	var reg enrollapi.EnrollResponse
	status, refusal := c.post(enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token, Hostname: "agent.example.org"}, &reg)
	g.Expect(refusal).To(BeNil())
	g.Expect(status).To(Equal(http.StatusCreated))
	key := testpki.Key(t)
	csrFor := func(uri string) string {
		u, err := url.Parse(uri)
		g.Expect(err).NotTo(HaveOccurred())
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{u}}, key)
		g.Expect(err).NotTo(HaveOccurred())
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	}

	other := "credo://workload/" + uuid.NewString()
	var resp enrollapi.CertificateResponse
	status, refusal = c.post(enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csrFor(other)}, &resp)
	g.Expect(status).To(Equal(http.StatusBadRequest))
	g.Expect(refusal).NotTo(BeNil())
	g.Expect(refusal.Reason).To(Equal(enrollapi.ReasonCSRInvalid))
	g.Expect(refusal.Message).To(ContainSubstring("exactly one URI SAN, " + reg.URI))
	g.Expect(certificateRequests(g, ns)).To(BeEmpty(), "nothing reached cert-manager")

	status, refusal = c.post(enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csrFor(reg.URI)}, &resp)
	g.Expect(refusal).To(BeNil())
	g.Expect(status / 100).To(Equal(2))
	block, _ := pem.Decode([]byte(resp.Certificate))
	g.Expect(block).NotTo(BeNil())
	leaf, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	verifiesAgainst(g, leaf, authority)
	g.Expect(leaf.URIs[0].String()).To(Equal(reg.URI))
}

// An Issuer that is not Ready (its CA Secret missing) leaves cert-manager's
// CertificateRequest pending: the agent is told to retry (503,
// SigningUnavailable) with cert-manager's reason in the message, the
// request is deleted, and nothing is lost: once the Secret exists, the
// same registration gets its certificate with the same token.
func TestAnIssuerThatIsNotReadyIsAClearRetryableError(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newCAIssuer(g, ns, "later", "later-ca")
	c := startController(t, ns, issuerArgs(ns, "later", "bundle", "--cert-manager-timeout=4s"), nil)
	// The bundle the CA checks against exists; the Issuer's own Secret not yet.
	authority := testpki.Authority(t, "cert-manager CA issuer")
	g.Expect(env.NewSecret(t, ns, "bundle", nil, nil, map[string][]byte{"ca.crt": authority.CertPEM()})).NotTo(BeNil())
	token := newToken(t, ns)

	var reg enrollapi.EnrollResponse
	_, refusal := c.post(enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token, Hostname: "agent.example.org"}, &reg)
	g.Expect(refusal).To(BeNil())
	key := testpki.Key(t)
	u, err := url.Parse(reg.URI)
	g.Expect(err).NotTo(HaveOccurred())
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{u}}, key)
	g.Expect(err).NotTo(HaveOccurred())
	csr := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))

	var resp enrollapi.CertificateResponse
	status, refusal := c.post(enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csr}, &resp)
	g.Expect(status).To(Equal(http.StatusServiceUnavailable))
	g.Expect(refusal).NotTo(BeNil())
	g.Expect(refusal.Reason).To(Equal(enrollapi.ReasonSigningUnavailable))
	g.Expect(refusal.Message).To(ContainSubstring("did not answer"))
	g.Expect(refusal.Message).To(ContainSubstring("(Ready False, Pending: Referenced issuer does not have a Ready status condition)"),
		"cert-manager's reason is said")
	g.Eventually(func() int { return len(certificateRequests(g, ns)) }, 10*time.Second).Should(BeZero(), "the request is deleted")

	g.Expect(env.Client.Create(ctx, caSecret(ns, "later-ca", authority))).To(Succeed())
	issuerReady(g, ns, "later")
	status, refusal = c.post(enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csr}, &resp)
	g.Expect(refusal).To(BeNil())
	g.Expect(status / 100).To(Equal(2))
	block, _ := pem.Decode([]byte(resp.Certificate))
	g.Expect(block).NotTo(BeNil())
	leaf, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	verifiesAgainst(g, leaf, authority)
}

// readyIssuer makes the CA Issuer ca of ns, signing with a new CA kept in
// the Secret issuer-ca, and waits until cert-manager makes it Ready.
func readyIssuer(t *testing.T, ns string) *testpki.Cert {
	t.Helper()
	g := NewWithT(t)
	authority := testpki.Authority(t, "cert-manager CA issuer")
	g.Expect(env.Client.Create(context.Background(), caSecret(ns, "issuer-ca", authority))).To(Succeed())
	newCAIssuer(g, ns, "ca", "issuer-ca")
	issuerReady(g, ns, "ca")
	return authority
}
