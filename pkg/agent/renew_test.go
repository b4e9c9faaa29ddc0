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
	"crypto/tls"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// inLastThird reports whether off is within [2/3, 5/6) of lifetime, exactly.
func inLastThird(off, lifetime time.Duration) bool {
	return 3*off >= 2*lifetime && 6*off < 5*lifetime
}

func TestRenewAtIsAlwaysWithinTwoThirdsAndFiveSixthsOfTheLifetime(t *testing.T) {
	nb := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	draws := []float64{0, math.Nextafter(1, 0), 1, 1.5, -1, math.NaN(), math.Inf(1)}
	for range 10000 {
		draws = append(draws, rand.Float64())
	}
	lifetimes := []time.Duration{time.Second, 3 * time.Second, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}
	for l := time.Duration(6); l < 200; l++ {
		lifetimes = append(lifetimes, l)
	}
	for range 1000 {
		lifetimes = append(lifetimes, time.Duration(rand.Int64N(int64(48*time.Hour)))+6)
	}
	for _, l := range lifetimes {
		for i, r := range draws {
			if i > 50 && l < time.Second && i%50 != 0 {
				continue // tiny lifetimes: the edges and a sample are enough
			}
			at := RenewAt(nb, nb.Add(l), r)
			if off := at.Sub(nb); !inLastThird(off, l) {
				t.Fatalf("lifetime %v, r=%v: renewal at %v after notBefore, outside [2/3, 5/6)", l, r, off)
			}
		}
	}
}

func TestRenewAtSpreadsRenewalsOverTheJitterWindow(t *testing.T) {
	g := NewWithT(t)
	nb := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	l := 24 * time.Hour
	lo, hi := nb.Add(l), nb
	for range 2000 {
		at := RenewAt(nb, nb.Add(l), rand.Float64())
		lo, hi = minTime(lo, at), maxTime(hi, at)
	}
	// The draws cover most of the window of lifetime/6.
	g.Expect(hi.Sub(lo)).To(BeNumerically(">", l/6*9/10))

	// Two agents holding the same certificate window do not renew at the
	// same instant: each draws its own jitter.
	h := newHarness(t, time.Hour, time.Hour)
	a1 := must(New(h.config(func(c *Config) { c.Jitter = nil })))
	a2 := must(New(h.config(func(c *Config) { c.Jitter = nil })))
	g.Expect(RenewAt(nb, nb.Add(l), a1.jitter())).NotTo(Equal(RenewAt(nb, nb.Add(l), a2.jitter())))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestBackoffDoublesUpToTheCapWithJitter(t *testing.T) {
	g := NewWithT(t)
	initial, capped := 100*time.Millisecond, 2*time.Second
	for attempt := range 40 {
		want := min(initial<<min(attempt, 20), capped)
		for _, r := range []float64{0, 0.5, math.Nextafter(1, 0), 1, -3, math.NaN(), rand.Float64()} {
			d := backoff(attempt, initial, capped, r)
			g.Expect(d).To(BeNumerically(">=", want/2), "attempt %d r %v", attempt, r)
			g.Expect(d).To(BeNumerically("<", want), "attempt %d r %v", attempt, r)
		}
	}
}

func TestRenewalHappensInTheLastThirdWithTheSameKey(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	const ttl = 3 * time.Second
	h := newHarness(t, ttl, 10*time.Second)
	a, done, stop := h.run(h.config())
	g.Expect(h.waitUpdate(10 * time.Second).Certificate).To(BeTrue())
	key := h.diskCert().Leaf.PublicKey

	for i := range 2 {
		g.Expect(h.waitUpdate(10*time.Second)).To(Equal(Update{Certificate: true}), "renewal %d", i+1)
	}
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))

	renewals := h.srv.okRenewals()
	g.Expect(renewals).To(HaveLen(2))
	for i, r := range renewals {
		lifetime := r.presented.NotAfter.Sub(r.presented.NotBefore)
		off := r.at.Sub(r.presented.NotBefore)
		g.Expect(3*off).To(BeNumerically(">=", 2*lifetime), "renewal %d came at %v of %v: too early", i+1, off, lifetime)
		// The upper bound allows for scheduling and the request's own time.
		g.Expect(off).To(BeNumerically("<", lifetime*5/6+500*time.Millisecond), "renewal %d came at %v of %v: too late", i+1, off, lifetime)
		g.Expect(r.csr.PublicKey).To(Equal(key), "renewal %d asked for another key", i+1)
		g.Expect(r.csr.URIs).To(HaveLen(1))
	}
	// Each renewal presented the certificate the previous one returned.
	g.Expect(renewals[1].presented.SerialNumber).NotTo(Equal(renewals[0].presented.SerialNumber))
	disk := h.diskCert()
	g.Expect(disk.Leaf.SerialNumber).NotTo(Equal(renewals[1].presented.SerialNumber))
	g.Expect(a.identity.Load().leaf.Raw).To(Equal(disk.Leaf.Raw))
	g.Expect(h.logs.String()).To(ContainSubstring(`msg="renewed, next renewal at `))
}

func TestRenewalRetriesAfterServiceUnavailable(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	h.srv.set(func(s *fakeServer) { s.renewFailures = 2 })
	_, done, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)

	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))
	_, _, renewals := h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(3))
	g.Expect([]int{renewals[0].status, renewals[1].status, renewals[2].status}).To(Equal([]int{503, 503, 200}))
	// Retry-After: 5 is honoured only up to RetryMax (200ms).
	for i := 1; i < 3; i++ {
		g.Expect(renewals[i].at.Sub(renewals[i-1].at)).To(BeNumerically("<", 2*time.Second))
	}
	g.Expect(h.logs.String()).To(ContainSubstring("renewing the certificate failed; retrying"))
	g.Expect(h.logs.String()).To(ContainSubstring(enrollapi.ReasonSigningUnavailable))
	// Every attempt sends the same request, byte for byte: the server
	// answers a retry whose answer was lost with the certificate issued.
	g.Expect(renewals[1].csrPEM).To(Equal(renewals[0].csrPEM))
	g.Expect(renewals[2].csrPEM).To(Equal(renewals[0].csrPEM))
}

// An agent restarted while a renewal is unanswered sends the request it
// sent before, not a new one (to the server, a new request presenting the
// replaced certificate would be a duplicate identity); once the renewal is
// saved, the next one is a new request.
// The workload's labels and hostname, as the registry answers them with
// each certificate, reach the agent at its next renewal without
// re-enrollment (Update.Attributes, Agent.Attributes), and survive a
// restart (the state file keeps them).
func TestARelabelReachesTheAgentAtItsNextRenewal(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 20*time.Second)
	h.srv.set(func(s *fakeServer) { s.labels, s.hostname = map[string]string{"role": "db"}, "vm-1" })
	a, _, stop := h.run(h.config())
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true, Bundle: true, Attributes: true}))
	labels, hostname := a.Attributes()
	g.Expect(labels).To(Equal(map[string]string{"role": "db"}))
	g.Expect(hostname).To(Equal("vm-1"))

	g.Expect(h.waitUpdate(10*time.Second)).To(Equal(Update{Certificate: true}), "a renewal with the same attributes")
	h.srv.set(func(s *fakeServer) { s.labels, s.hostname = map[string]string{"role": "web", "tier": "1"}, "vm-2" })
	g.Expect(h.waitUpdate(10*time.Second)).To(Equal(Update{Certificate: true, Attributes: true}), "the renewal after the relabel")
	labels, hostname = a.Attributes()
	g.Expect(labels).To(Equal(map[string]string{"role": "web", "tier": "1"}))
	g.Expect(hostname).To(Equal("vm-2"))
	labels["role"] = "changed by the caller"
	labels, _ = a.Attributes()
	g.Expect(labels).To(HaveKeyWithValue("role", "web"), "Attributes returns a copy")
	g.Expect(stop()).To(MatchError(context.Canceled))

	a, _, stop = h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Eventually(func() map[string]string { l, _ := a.Attributes(); return l }, 10*time.Second, 20*time.Millisecond).
		Should(Equal(map[string]string{"role": "web", "tier": "1"}), "restored from the state file")
	g.Expect(stop()).To(MatchError(context.Canceled))
	enrolls, _, _ := h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(1), "no re-enrollment")
}

func TestARestartedAgentRetriesTheSameRenewalRequest(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 20*time.Second)
	h.srv.set(func(s *fakeServer) { s.renewFailures = 1 << 20 })
	_, _, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	g.Eventually(func() int { _, _, r := h.srv.snapshot(); return len(r) }, 10*time.Second, 20*time.Millisecond).Should(BeNumerically(">=", 1))
	g.Expect(stop()).To(MatchError(context.Canceled))
	g.Expect(filepath.Join(h.dir, pendingFile)).To(BeARegularFile())

	h.srv.set(func(s *fakeServer) { s.renewFailures = 0 })
	_, _, stop = h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	_, _, renewals := h.srv.snapshot()
	last := renewals[len(renewals)-1]
	g.Expect(last.status).To(Equal(http.StatusOK))
	for _, r := range renewals {
		g.Expect(r.csrPEM).To(Equal(renewals[0].csrPEM), "the restarted agent sent another request")
	}
	g.Expect(filepath.Join(h.dir, pendingFile)).NotTo(BeAnExistingFile())

	// The next renewal renews another certificate, with a new request.
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(stop()).To(MatchError(context.Canceled))
	_, _, renewals = h.srv.snapshot()
	g.Expect(renewals[len(renewals)-1].csrPEM).NotTo(Equal(renewals[0].csrPEM))
}

func TestARenewalRefusedForGoodStopsRunForReenrollment(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	h.srv.set(func(s *fakeServer) {
		s.renewRefusal = &enrollapi.Error{Reason: enrollapi.ReasonWorkloadNotFound, Message: "the workload was deleted"}
	})
	_, done, _ := h.run(h.config())
	h.waitUpdate(10 * time.Second)

	var err error
	g.Eventually(done, 10*time.Second).Should(Receive(&err))
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var se *StatusError
	g.Expect(errors.As(err, &se)).To(BeTrue())
	g.Expect(se.StatusCode).To(Equal(http.StatusNotFound))
	g.Expect(se.API.Reason).To(Equal(enrollapi.ReasonWorkloadNotFound))
	g.Expect(err.Error()).To(ContainSubstring("the workload was deleted"))
	_, _, renewals := h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(1), "a refusal for good is not retried")
	g.Expect(h.readState().ReenrollmentReason).To(Equal(enrollapi.ReasonWorkloadNotFound))

	// A restart without a token does not use the refused certificate again.
	a := must(New(h.config(func(c *Config) { c.Token = "" })))
	err = a.Run(context.Background())
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var apiErr *enrollapi.Error
	g.Expect(errors.As(err, &apiErr)).To(BeTrue())
	g.Expect(apiErr.Reason).To(Equal(enrollapi.ReasonWorkloadNotFound))
	_, _, renewals = h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(1))
}

func TestARenewalThatNoLongerAuthenticatesStopsRunForReenrollment(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	_, done, _ := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	// The CA that issued the certificate left the server's bundle (a
	// rotation past its overlap): the renewal answers 401 Unauthenticated,
	// which only a new enrollment cures.
	h.srv.set(func(s *fakeServer) { s.bundle = newTestCA(t, "next").pem })

	var err error
	g.Eventually(done, 10*time.Second).Should(Receive(&err))
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var se *StatusError
	g.Expect(errors.As(err, &se)).To(BeTrue())
	g.Expect(se.StatusCode).To(Equal(http.StatusUnauthorized))
	g.Expect(se.API.Reason).To(Equal(enrollapi.ReasonUnauthenticated))
	_, _, renewals := h.srv.snapshot()
	g.Expect(renewals).To(HaveLen(1), "a refusal for good is not retried")
	g.Expect(h.readState().ReenrollmentReason).To(Equal(enrollapi.ReasonUnauthenticated))
}

func TestRenewalGivesUpWhenTheGraceEnds(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	const ttl, grace = 2 * time.Second, time.Second
	h := newHarness(t, ttl, grace)
	h.srv.set(func(s *fakeServer) { s.renewFailures = math.MaxInt })
	_, done, _ := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	leaf := h.diskCert().Leaf

	var err error
	g.Eventually(done, 10*time.Second).Should(Receive(&err))
	g.Expect(time.Now()).To(BeTemporally(">=", leaf.NotAfter.Add(grace)))
	g.Expect(errors.Is(err, ErrReenrollmentRequired)).To(BeTrue(), "%v", err)
	var apiErr *enrollapi.Error
	g.Expect(errors.As(err, &apiErr)).To(BeTrue())
	g.Expect(apiErr.Reason).To(Equal(enrollapi.ReasonRenewalGraceOver))
	g.Expect(apiErr.Message).To(ContainSubstring(enrollapi.ReasonSigningUnavailable))
	_, _, renewals := h.srv.snapshot()
	g.Expect(len(renewals)).To(BeNumerically(">", 2))
	g.Expect(h.readState().ReenrollmentReason).To(Equal(enrollapi.ReasonRenewalGraceOver))
}

func TestAnExpiredCertificateRenewsWithinTheGraceAfterARestart(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 2*time.Second, 30*time.Second)
	_, _, stop := h.run(h.config())
	h.waitUpdate(10 * time.Second)
	g.Expect(stop()).To(MatchError(context.Canceled))
	expired := h.diskCert().Leaf
	time.Sleep(time.Until(expired.NotAfter) + 100*time.Millisecond)

	_, done, stop := h.run(h.config(func(c *Config) { c.Token = "" }))
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Certificate: true}))
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))
	enrolls, _, renewals := h.srv.snapshot()
	g.Expect(enrolls).To(HaveLen(1))
	g.Expect(renewals).NotTo(BeEmpty())
	g.Expect(renewals[0].status).To(Equal(http.StatusOK))
	g.Expect(renewals[0].presented.Raw).To(Equal(expired.Raw))
	g.Expect(renewals[0].at).To(BeTemporally(">", expired.NotAfter))
	g.Expect(h.diskCert().Leaf.NotAfter).To(BeTemporally(">", time.Now()))
}

func TestAChangedBundleIsWrittenAndTLSConfigFollowsIt(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, time.Hour, time.Hour)
	a, _, stop := h.run(h.config(func(c *Config) { c.BundlePollInterval = 100 * time.Millisecond }))
	h.waitUpdate(10 * time.Second)

	// A server whose certificate comes from a CA the agent does not know yet.
	next := newTestCA(t, "next CA")
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].URIs[0].String()))
	}))
	other.Config.ErrorLog = discardLog()
	other.TLS = &tls.Config{Certificates: []tls.Certificate{*next.servingCert(t)}, ClientAuth: tls.RequireAnyClientCert}
	other.StartTLS()
	defer other.Close()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: a.TLSConfig("127.0.0.1")}, Timeout: 5 * time.Second}
	_, err := hc.Get(other.URL) //nolint:bodyclose // the TLS handshake fails: there is no response, so no body.
	g.Expect(err).To(MatchError(ContainSubstring("verifying the server's certificate")))

	both := append(append([]byte(nil), h.ca.pem...), next.pem...)
	h.srv.set(func(s *fakeServer) { s.bundle = both })
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Bundle: true}))
	g.Expect(must(os.ReadFile(filepath.Join(h.dir, bundleFile)))).To(Equal(both))

	// The same config, built before the change, now trusts the new CA and
	// presents the workload certificate.
	resp := must(hc.Get(other.URL)) //nolint:bodyclose // closed on the next line; bodyclose does not see through must.
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(stop()).To(MatchError(context.Canceled))
	g.Expect(h.logs.String()).To(ContainSubstring("the trust bundle changed"))
}

func TestACARotationKeepsTheAgentWorkingAcrossTheOverlap(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	h := newHarness(t, 3*time.Second, 10*time.Second)
	_, done, stop := h.run(h.config(func(c *Config) { c.BundlePollInterval = 100 * time.Millisecond }))
	h.waitUpdate(10 * time.Second)

	// Overlap: both CAs in the bundle, the server still on the old one.
	next := newTestCA(t, "next CA")
	both := append(append([]byte(nil), h.ca.pem...), next.pem...)
	h.srv.set(func(s *fakeServer) { s.bundle = both })
	g.Expect(h.waitUpdate(10 * time.Second)).To(Equal(Update{Bundle: true}))

	// The server moves to the new CA, which the CA file does not hold; the
	// agent's next renewal brings a certificate of the new CA.
	h.srv.serving.Store(next.servingCert(t))
	h.srv.set(func(s *fakeServer) { s.signer = next })
	h.waitUpdateMatching(10*time.Second, func(u Update) bool { return u.Certificate })
	g.Expect(h.diskCert().Leaf.CheckSignatureFrom(next.cert)).To(Succeed())

	// The overlap ends: the old CA leaves the bundle. The agent still
	// verifies the server and renews.
	h.srv.set(func(s *fakeServer) { s.bundle = next.pem })
	h.waitUpdateMatching(10*time.Second, func(u Update) bool { return u.Bundle })
	g.Expect(must(os.ReadFile(filepath.Join(h.dir, bundleFile)))).To(Equal(next.pem))
	h.waitUpdateMatching(10*time.Second, func(u Update) bool { return u.Certificate })
	g.Expect(done).NotTo(Receive())
	g.Expect(stop()).To(MatchError(context.Canceled))
	g.Expect(h.diskCert().Leaf.CheckSignatureFrom(next.cert)).To(Succeed())
	for _, r := range h.srv.okRenewals() {
		g.Expect(r.status).To(Equal(http.StatusOK))
	}
	_, _, all := h.srv.snapshot()
	g.Expect(all).To(HaveLen(len(h.srv.okRenewals())), "every renewal succeeded")
}
