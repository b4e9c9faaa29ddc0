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

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// A deny without a reason is refused before anything is sent.
func TestWorkloadDenyRefusesAnEmptyReason(t *testing.T) {
	for _, args := range [][]string{{}, {"--reason", ""}, {"--reason", "  "}} {
		g := NewWithT(t)
		var out bytes.Buffer
		err := run(append([]string{"workload", "deny", "some-uuid", "--kubeconfig", "/nonexistent"}, args...), strings.NewReader(""), &out)
		g.Expect(err).To(MatchError(HavePrefix("--reason is required")), "%v", args)
		g.Expect(out.Len()).To(BeZero())
	}
}

// deny says who denied, when it takes effect, and until when the current
// certificate stays valid; the denial it replaces, if any, is named.
func TestWorkloadDenyOutput(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(now.Add(d)); return &m }
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-demo", Name: "3f1c2b8e"},
		Spec:       enrollv1.WorkloadSpec{Policy: "web", Hostname: "vm-1", Denied: &enrollv1.WorkloadDenial{Reason: "stolen", By: "jane"}},
		Status:     enrollv1.WorkloadStatus{Serial: "aa78dd39", NotAfter: at(19 * time.Hour)},
	}
	cases := []struct {
		name     string
		notAfter *metav1.Time
		previous *enrollv1.WorkloadDenial
		want     []string
	}{
		{"a valid certificate", at(19 * time.Hour), nil, []string{
			"workload tenant-demo/3f1c2b8e (hostname vm-1, policy web) denied by jane: stolen\n",
			"takes effect at the workload's next renewal: the enrollment server refuses it (WorkloadDenied) and credo-agent exits 4.\n",
			"Its current certificate (serial aa78dd39) stays valid until its notAfter, 2026-03-02T07:00:00Z (in 19h)",
			"Lift it with: kubectl credo workload undeny 3f1c2b8e -n tenant-demo\n",
		}},
		{"an expired certificate", at(-time.Hour), nil, []string{"Its certificate (serial aa78dd39) expired at 2026-03-01T11:00:00Z.\n"}},
		{"no certificate", nil, nil, []string{"no certificate on record"}},
		{"a denial replaced", at(time.Hour), &enrollv1.WorkloadDenial{Reason: "duplicate identity", By: "credo-enrollment-controller"},
			[]string{"(it replaces the denial by credo-enrollment-controller: duplicate identity)\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			wl.Status.NotAfter = tc.notAfter
			var out bytes.Buffer
			g.Expect(printDenied(&out, wl, tc.previous, now)).To(Succeed())
			for _, want := range tc.want {
				g.Expect(out.String()).To(ContainSubstring(want))
			}
		})
	}
}
