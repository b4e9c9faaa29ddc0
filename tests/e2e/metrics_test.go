//go:build e2e

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

package e2e

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testenv"
)

// hasSeries reports whether the family has a series with the label.
func hasSeries(families map[string]*dto.MetricFamily, name, label, value string) bool {
	for _, m := range families[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label && lp.GetValue() == value {
				return true
			}
		}
	}
	return false
}

// Every controller binary registers Flux's reconcile histogram and credo's
// counters on its metrics endpoint, and records them as it works: the
// samples' TrustAnchors, CredentialAccounts and EnrollmentPolicy are
// reconciled, projections and account Secrets written, and a malformed
// enrollment request refused.
func TestEveryControllerServesReconcileDurationsAndCredoCounters(t *testing.T) {
	e := needLocal(t)
	// A body that is no JSON is refused before any token is checked, so it
	// spends nothing of 127.0.0.1's budget of failed token attempts.
	listener := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		// Only the refusal is counted here; the listener's certificate is
		// checked by the agents' tests.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test of a counter
	}}
	resp, err := listener.Post(e.EnrollmentURL+enrollapi.PathWorkloads, "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatalf("posting to the enrollment listener: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a malformed enrollment answered %s, want 400", resp.Status)
	}

	want := map[string][][3]string{
		"trust-controller": {
			{"gotk_reconcile_duration_seconds", "kind", "TrustAnchor"},
			{"credo_trust_projections_written_total", "namespace", "tenant-demo"},
		},
		"credential-controller": {
			{"gotk_reconcile_duration_seconds", "kind", "CredentialAccount"},
			{"credo_credential_secrets_created_total", "namespace", "tenant-demo"},
		},
		"enrollment-controller": {
			{"gotk_reconcile_duration_seconds", "kind", "EnrollmentPolicy"},
			{"credo_enrollment_refused_total", "reason", enrollapi.ReasonBadRequest},
		},
	}
	for _, c := range e.Controllers {
		series, ok := want[c.Name]
		if !ok {
			continue
		}
		deadline := time.Now().Add(60 * time.Second)
		for _, s := range series {
			for {
				families, err := testenv.Scrape(c.MetricsAddr)
				if err == nil && hasSeries(families, s[0], s[1], s[2]) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s serves no %s{%s=%q} (last error: %v)", c.Name, s[0], s[1], s[2], err)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
		delete(want, c.Name)
	}
	if len(want) != 0 {
		t.Fatalf("controllers not running in the environment: %v", want)
	}
}
