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
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testenv"
)

// counter reads a credo counter from controller-runtime's registry, which
// the enrollment-controller serves on its metrics endpoint, and returns
// every credo label value gathered on the way.
func counter(t *testing.T, name string, want map[string]string) (float64, []string) {
	t.Helper()
	g := NewWithT(t)
	return testenv.CounterValue(g, name, want), testenv.CredoLabelValues(g)
}

func TestEnrollmentsRenewalsRefusalsAndRateLimitedAttemptsAreCounted(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 1))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	byNS := map[string]string{"namespace": ns}
	invalid := map[string]string{"reason": enrollapi.ReasonTokenInvalid}
	limited := map[string]string{"reason": enrollapi.ReasonRateLimited}
	invalidBefore, _ := counter(t, "credo_enrollment_refused_total", invalid)
	limitedBefore, _ := counter(t, "credo_enrollment_refused_total", limited)

	w := enroll(t, base, token, nil)
	if n, _ := counter(t, "credo_enrollment_enrollments_total", byNS); n != 1 {
		t.Fatalf("credo_enrollment_enrollments_total{namespace=%q} = %v after one enrollment, want 1", ns, n)
	}
	if status, e, _ := renew(t, base, w, w.tlsCert()); e != nil {
		t.Fatalf("renewal refused: %d %s", status, e)
	}
	if n, _ := counter(t, "credo_enrollment_renewals_total", byNS); n != 1 {
		t.Fatalf("credo_enrollment_renewals_total{namespace=%q} = %v after one renewal, want 1", ns, n)
	}

	bad, _ := jointoken.New()
	c := httpClient(nil)
	status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: bad.String()}, nil)
	expectRefused(t, "a wrong token", status, e, http.StatusUnauthorized, enrollapi.ReasonTokenInvalid)
	status, e = post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: bad.String()}, nil)
	expectRefused(t, "a second wrong token", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)

	if n, _ := counter(t, "credo_enrollment_refused_total", invalid); n-invalidBefore != 1 {
		t.Fatalf("refusals for TokenInvalid moved by %v, want 1", n-invalidBefore)
	}
	n, seen := counter(t, "credo_enrollment_refused_total", limited)
	if n-limitedBefore != 1 {
		t.Fatalf("rate-limited attempts moved by %v, want 1", n-limitedBefore)
	}
	for _, v := range seen {
		if strings.Contains(v, token) || strings.Contains(v, bad.String()) || v == w.uuid || strings.HasPrefix(v, "127.") {
			t.Fatalf("label value %q is a token, a workload or a client address", v)
		}
	}
}
