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
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// A policy asking for more than the platform allows (here a certificate
// TTL over --max-certificate-ttl) signs nothing: not a first certificate,
// not a renewal. The refusal is not a re-enrollment: the workload renews
// again once the policy is lowered.
func TestAPolicyOverThePlatformMaximumSignsNothing(t *testing.T) {
	const maxTTL = 2 * time.Hour
	base := startServer(t, withLimits(func(l *enrollment.Limits) { l.MaxCertificateTTL = maxTTL }))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(maxTTL, time.Hour))
	token, _ := newToken(t, p, time.Hour)

	// At the maximum: signed, and never beyond now + the maximum.
	w := enroll(t, base, token, nil)
	if limit := time.Now().Add(maxTTL); w.cert.NotAfter.After(limit) {
		t.Fatalf("notAfter %s is beyond now + the maximum (%s)", w.cert.NotAfter, limit)
	}

	before := p.DeepCopy()
	p.Spec.CertificateTTL = &metav1.Duration{Duration: maxTTL + time.Hour}
	// A patch: the EnrollmentPolicy reconciler writes the policy's status meanwhile.
	if err := k8s.Patch(context.Background(), p, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var got enrollv1.EnrollmentPolicy
		return reader.Get(context.Background(), keyOf(p), &got) == nil && got.GetCertificateTTL() > maxTTL
	})
	signed := testCA.signed.Load()
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, nil)
	expectRefused(t, "enrollment under a policy over the maximum", status, e, http.StatusForbidden, enrollapi.ReasonPolicyExceedsLimits)
	if !strings.Contains(e.Message, "certificateTTL") || !strings.Contains(e.Message, "2h0m0s") {
		t.Fatalf("the refusal %q does not name the field and the maximum", e.Message)
	}
	status, e, _ = renew(t, base, w, w.tlsCert())
	expectRefused(t, "renewal under a policy over the maximum", status, e, http.StatusForbidden, enrollapi.ReasonPolicyExceedsLimits)
	if e.NeedsReenrollment() {
		t.Fatal("a policy over the maximum tells the agent to enroll again; fixing the policy is enough")
	}
	if testCA.signed.Load() != signed {
		t.Fatal("a policy over the maximum reached the CA")
	}
}

// greedyCA signs for ten years whatever it is asked: an external issuer
// that does not honour the requested lifetime.
type greedyCA struct{ *memoryCA }

func (g greedyCA) Sign(ctx context.Context, req ca.SigningRequest) (*ca.Issued, error) {
	req.NotAfter = time.Now().Add(87600 * time.Hour)
	return g.memoryCA.Sign(ctx, req)
}

// Whatever the issuer returns, no certificate that lives beyond now plus
// the platform's maximum reaches an agent or the registry.
func TestACertificateBeyondTheMaximumIsNeverHandedOut(t *testing.T) {
	base := startServer(t, withCA(greedyCA{testCA}))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	c := httpClient(nil)
	var reg enrollapi.EnrollResponse
	if status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, &reg); e != nil {
		t.Fatalf("step 1: %d %s", status, e)
	}
	status, e := post(t, c, base+enrollapi.PathCertificate(reg.UUID),
		enrollapi.CertificateRequest{Token: token, CSR: workloadCSR(t, testpki.Key(t), reg.UUID)}, nil)
	if e == nil || status/100 != 5 {
		t.Fatalf("a ten-year certificate was handed out: %d %v", status, e)
	}
	if wl := getWorkload(t, ns, reg.UUID); wl.Status.Serial != "" {
		t.Fatal("a ten-year certificate was recorded as the workload's")
	}
}

// A join token enrolls for at most --max-token-lifetime after its creation,
// even when its record says it expires later (minted under a longer policy
// lifetime, or written by hand).
func TestAJoinTokenEnrollsNoLongerThanTheMaximumTokenLifetime(t *testing.T) {
	base := startServer(t, withLimits(func(l *enrollment.Limits) { l.MaxTokenLifetime = 2 * time.Hour }))
	t.Cleanup(func() { clockOffset.Store(0) })
	ns := env.NewNamespace(t)
	spec := policySpec(time.Hour, time.Hour)
	spec.TokenLifetime = &metav1.Duration{Duration: time.Hour}
	p := newPolicy(t, ns, spec)
	token, _ := newToken(t, p, 30*24*time.Hour)

	clockOffset.Store(int64(3 * time.Hour))
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, nil)
	expectRefused(t, "a token older than the maximum lifetime", status, e, http.StatusUnauthorized, enrollapi.ReasonTokenExpired)
}

// One token registers at most --max-pending-workloads-per-token workloads
// that have no certificate yet; more are refused with 429 until some
// complete. Other tokens are not affected.
func TestPendingRegistrationsPerTokenAreBounded(t *testing.T) {
	base := startServer(t, withLimits(func(l *enrollment.Limits) { l.MaxPendingPerToken = 3 }))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	other, _ := newToken(t, p, time.Hour)
	c := httpClient(nil)
	register := func(tok string) (enrollapi.EnrollResponse, int, *enrollapi.Error) {
		var reg enrollapi.EnrollResponse
		status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: tok}, &reg)
		return reg, status, e
	}
	var first enrollapi.EnrollResponse
	for i := range 3 {
		reg, status, e := register(token)
		if e != nil {
			t.Fatalf("registration %d: %d %s", i, status, e)
		}
		if i == 0 {
			first = reg
		}
	}
	_, status, e := register(token)
	expectRefused(t, "a fourth pending registration", status, e, http.StatusTooManyRequests, enrollapi.ReasonTooManyPending)
	if !strings.Contains(e.Message, "3") {
		t.Fatalf("the refusal %q does not say the limit", e.Message)
	}
	if _, status, e := register(other); e != nil {
		t.Fatalf("another token was limited: %d %s", status, e)
	}
	if status, e := post(t, c, base+enrollapi.PathCertificate(first.UUID),
		enrollapi.CertificateRequest{Token: token, CSR: workloadCSR(t, testpki.Key(t), first.UUID)}, nil); e != nil {
		t.Fatalf("step 2: %d %s", status, e)
	}
	if _, status, e := register(token); e != nil {
		t.Fatalf("a completed registration did not free its place: %d %s", status, e)
	}
}

// The platform's maxima are flags: each must be positive and within the
// CRD's own bound, so no flag can allow what the API server refuses.
func TestLimitsBeyondTheCRDBoundsAreRefused(t *testing.T) {
	if err := enrollment.DefaultLimits().Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	for name, mutate := range map[string]func(*enrollment.Limits){
		"a ten-year certificate maximum": func(l *enrollment.Limits) { l.MaxCertificateTTL = 87600 * time.Hour },
		"a certificate maximum under 5s": func(l *enrollment.Limits) { l.MaxCertificateTTL = time.Second },
		"a token maximum over a year":    func(l *enrollment.Limits) { l.MaxTokenLifetime = enrollv1.MaxTokenLifetime + time.Hour },
		"a grace maximum over 168h":      func(l *enrollment.Limits) { l.MaxRenewalGrace = enrollv1.MaxRenewalGrace + time.Hour },
		"no pending registration":        func(l *enrollment.Limits) { l.MaxPendingPerToken = 0 },
	} {
		l := enrollment.DefaultLimits()
		mutate(&l)
		if err := l.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
