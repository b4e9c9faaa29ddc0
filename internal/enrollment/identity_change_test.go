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
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// After the install's form changed (a server started with other flags on
// the same cluster), the current certificate, in the former form, still
// authenticates its renewal; a request for the former URI is answered 409
// IdentityChanged with the URI now, and the same request for that URI,
// with the same certificate and key, renews into the new form.
func TestARenewalInTheFormerFormIsToldTheNewURIAndRenewsIntoIt(t *testing.T) {
	g := NewWithT(t)
	before := startServer(t)
	after := startServer(t, withIdentity(spiffeForm))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, before, token, nil)
	g.Expect(w.uri.String()).To(Equal(enrollapi.WorkloadURI(w.uuid).String()))
	g.Expect(getWorkload(t, ns, w.uuid).Status.URI).To(Equal(w.uri.String()))
	signed := testCA.signed.Load()

	status, e, _ := renew(t, after, w, w.tlsCert())
	expectRefused(t, "a renewal for the former URI", status, e, http.StatusConflict, enrollapi.ReasonIdentityChanged)
	want := spiffeForm.URI(w.uuid).String()
	g.Expect(e.URI).To(Equal(want))
	g.Expect(e.Message).To(ContainSubstring(want))
	g.Expect(e.NeedsReenrollment()).To(BeFalse())
	g.Expect(testCA.signed.Load()).To(Equal(signed), "nothing is signed for the former URI")
	wl := getWorkload(t, ns, w.uuid)
	g.Expect(wl.Status.Serial).To(Equal(fmt.Sprintf("%x", w.cert.SerialNumber)))

	// A request for another workload's URI in the new form is not a
	// change of form.
	other := spiffeForm.URI("0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60")
	status, e, _ = renewWith(t, after, w, w.tlsCert(), enrollapi.RenewalRequest{CSR: uriCSR(t, w.key, other)})
	expectRefused(t, "a renewal for another workload's URI", status, e, http.StatusBadRequest, enrollapi.ReasonCSRInvalid)

	w.uri = spiffeForm.URI(w.uuid)
	status, e, resp := renew(t, after, w, w.tlsCert())
	g.Expect(e).To(BeNil(), "renewal for the new URI: %d %v", status, e)
	g.Expect(resp.URI).To(Equal(want))
	next := parseCert(t, resp.Certificate)
	g.Expect(next.URIs).To(HaveLen(1))
	g.Expect(next.URIs[0].String()).To(Equal(want))
	g.Expect(next.PublicKey).To(Equal(w.cert.PublicKey))
	wl = getWorkload(t, ns, w.uuid)
	g.Expect(wl.Status.URI).To(Equal(want))
	g.Expect(wl.Status.Serial).To(Equal(fmt.Sprintf("%x", next.SerialNumber)))
	g.Expect(wl.Status.Renewals).To(Equal(int64(1)))

	// The new certificate renews in the new form; changed back, the
	// install names the default form's URI alike.
	w.cert = next
	status, e, resp = renew(t, after, w, w.tlsCert())
	g.Expect(e).To(BeNil(), "second renewal: %d %v", status, e)
	w.cert = parseCert(t, resp.Certificate)
	status, e, _ = renew(t, before, w, w.tlsCert())
	expectRefused(t, "a renewal after the change back", status, e, http.StatusConflict, enrollapi.ReasonIdentityChanged)
	g.Expect(e.URI).To(Equal(enrollapi.WorkloadURI(w.uuid).String()))
}

// A renewal served before the change whose answer was lost is retried with
// the same request, in the former form, and the replaced certificate: it
// gets the certificate issued then, as before a change, and is not taken
// for a duplicate identity.
func TestARenewalRetriedAcrossAChangeOfFormGetsTheCertificateIssued(t *testing.T) {
	g := NewWithT(t)
	before := startServer(t)
	after := startServer(t, withIdentity(spiffeForm))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, before, token, nil)

	lost := enrollapi.RenewalRequest{CSR: uriCSR(t, w.key, w.uri)}
	status, e, first := renewWith(t, before, w, w.tlsCert(), lost)
	g.Expect(e).To(BeNil(), "renewal: %d %v", status, e)

	status, e, again := renewWith(t, after, w, w.tlsCert(), lost)
	g.Expect(e).To(BeNil(), "the retry across the change: %d %v", status, e)
	g.Expect(again.Certificate).To(Equal(first.Certificate))
	g.Expect(again.URI).To(Equal(w.uri.String()))
	g.Expect(getWorkload(t, ns, w.uuid).Status.Duplicate).To(BeNil())
}

// Step 2 asks for the URI step 1 named: a request in another form is
// refused, saying which URI is the workload's.
func TestACertificateRequestInAnotherFormIsRefusedAtEnrollment(t *testing.T) {
	g := NewWithT(t)
	base := startServer(t, withIdentity(spiffeForm))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	reg := register(t, base, token)
	g.Expect(reg.URI).To(Equal(spiffeForm.URI(reg.UUID).String()))
	csr := workloadCSR(t, testpki.Key(t), reg.UUID)
	status, e := post(t, httpClient(nil), base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csr}, nil)
	expectRefused(t, "a request in the default form", status, e, http.StatusBadRequest, enrollapi.ReasonCSRInvalid)
	g.Expect(e.Message).To(ContainSubstring(reg.URI))
}
