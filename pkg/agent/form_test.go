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
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

var spiffeForm = enrollapi.IdentityForm{Scheme: enrollapi.SchemeSPIFFE, TrustDomain: "prod.example"}

// An agent is not told the install's identity form: it asks for the URI
// the server names at enrollment, and renews it.
func TestAnAgentEnrollsAndRenewsInTheFormTheServerNames(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	h.srv.set(func(s *fakeServer) { s.form = spiffeForm })
	a, done, stop := h.run(h.config())
	g.Expect(h.waitUpdate(10 * time.Second).Certificate).To(BeTrue())
	id := a.identity.Load().uuid
	g.Expect(h.diskCert().Leaf.URIs[0].String()).To(Equal("spiffe://prod.example/workload/" + id))

	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))
	renewals := h.srv.okRenewals()
	g.Expect(renewals).To(HaveLen(1))
	g.Expect(renewals[0].csr.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))
	g.Expect(h.diskCert().Leaf.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))

	// From disk, the certificate is the state's workload's.
	a, _, stop = h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Eventually(func() *identity { return a.identity.Load() }, 10*time.Second, 10*time.Millisecond).ShouldNot(BeNil())
	g.Expect(a.identity.Load().uuid).To(Equal(id))
	g.Expect(stop()).To(MatchError(context.Canceled))
	g.Expect(h.logs.String()).NotTo(ContainSubstring("belongs to another workload"))
}

// After the platform changed the install's form, the renewal of a
// certificate in the former form is answered IdentityChanged with the URI
// now: the agent asks again for it, with the same certificate and key, and
// keeps renewing in the new form, across a restart.
func TestAnAgentRenewsIntoTheNewFormAfterAChange(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	a, done, stop := h.run(h.config())
	g.Expect(h.waitUpdate(10 * time.Second).Certificate).To(BeTrue())
	id := a.identity.Load().uuid
	first := h.diskCert().Leaf
	g.Expect(first.URIs[0].String()).To(Equal(enrollapi.WorkloadURI(id).String()))

	h.srv.set(func(s *fakeServer) { s.form = spiffeForm })
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))

	_, _, renewals := h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(2))
	g.Expect(renewals[0].status).To(Equal(http.StatusConflict))
	g.Expect(renewals[0].csr.URIs[0].String()).To(Equal(enrollapi.WorkloadURI(id).String()))
	g.Expect(renewals[1].status).To(Equal(http.StatusOK))
	g.Expect(renewals[1].csr.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))
	for _, r := range renewals {
		g.Expect(r.presented.Raw).To(Equal(first.Raw), "the renewal presented another certificate")
		g.Expect(r.csr.PublicKey).To(Equal(first.PublicKey), "the renewal asked for another key")
	}
	renewed := h.diskCert().Leaf
	g.Expect(renewed.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))
	g.Expect(h.logs.String()).To(ContainSubstring("the install's identity form changed; renewing as spiffe://prod.example/workload/" + id))

	// Restarted from disk, it renews in the new form at once.
	a, done, stop = h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))
	g.Expect(a.identity.Load().uuid).To(Equal(id))
	_, _, renewals = h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(3))
	g.Expect(renewals[2].status).To(Equal(http.StatusOK))
	g.Expect(renewals[2].presented.Raw).To(Equal(renewed.Raw))
	g.Expect(renewals[2].csr.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))
}

// A restart while the renewal in the new form is unanswered sends that
// request again, not a new one in the certificate's form: to the server, a
// new request presenting a replaced certificate is a duplicate identity.
func TestARestartedAgentRetriesTheRenewalInTheNewForm(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 20*time.Second)
	a, _, stop := h.run(h.config())
	g.Expect(h.waitUpdate(10 * time.Second).Certificate).To(BeTrue())
	id := a.identity.Load().uuid
	newForm := func(csr *x509.CertificateRequest) bool { return csr.URIs[0].String() == spiffeForm.URI(id).String() }
	h.srv.set(func(s *fakeServer) { s.form, s.unavailableFor = spiffeForm, newForm })
	g.Eventually(func() bool {
		_, _, rs := h.srv.snapshot()
		return len(rs) >= 2 && rs[len(rs)-1].status == http.StatusServiceUnavailable
	}, 10*time.Second, 10*time.Millisecond).Should(BeTrue())
	g.Expect(stop()).To(MatchError(context.Canceled))
	_, _, before := h.srv.snapshot()
	inFlight := before[len(before)-1].csrPEM

	g.Expect(before[0].status).To(Equal(http.StatusConflict))
	h.srv.set(func(s *fakeServer) { s.unavailableFor = nil })
	_, _, stop = h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(stop()).To(MatchError(context.Canceled))
	_, _, after := h.srv.snapshot()
	for _, r := range after[len(before):] {
		g.Expect(r.csrPEM).To(Equal(inFlight), "the restarted agent sent another request")
	}
	g.Expect(h.diskCert().Leaf.URIs[0].String()).To(Equal(spiffeForm.URI(id).String()))
}
