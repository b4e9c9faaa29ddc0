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
// certificate stays valid; the denial it replaces, if any, is named with
// its author only when that is established.
func TestWorkloadDenyOutput(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(now.Add(d)); return &m }
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-demo", Name: "3f1c2b8e"},
		Spec:       enrollv1.WorkloadSpec{Policy: "web", Hostname: "vm-1", Denied: &enrollv1.WorkloadDenial{Reason: "stolen", By: "jane"}},
		Status:     enrollv1.WorkloadStatus{Serial: "aa78dd39", NotAfter: at(19 * time.Hour)},
	}
	cases := []struct {
		name       string
		notAfter   *metav1.Time
		previous   *enrollv1.WorkloadDenial
		previousBy string
		want, not  []string
	}{
		{"a valid certificate", at(19 * time.Hour), nil, "", []string{
			"workload tenant-demo/3f1c2b8e (hostname vm-1, policy web) denied by jane: stolen\n",
			"takes effect at the workload's next renewal: the enrollment server refuses it (WorkloadDenied) and credo-agent exits 4.\n",
			"Its current certificate (serial aa78dd39) stays valid until its notAfter, 2026-03-02T07:00:00Z (in 19h)",
			"Lift it with: kubectl credo workload undeny 3f1c2b8e -n tenant-demo\n",
		}, []string{"replaces"}},
		{"an expired certificate", at(-time.Hour), nil, "", []string{"Its certificate (serial aa78dd39) expired at 2026-03-01T11:00:00Z.\n"}, nil},
		{"no certificate", nil, nil, "", []string{"no certificate on record"}, nil},
		{"a denial replaced, its author established", at(time.Hour), &enrollv1.WorkloadDenial{Reason: "duplicate identity", By: "credo-enrollment-controller"},
			"credo-enrollment-controller", []string{"(it replaces the denial by credo-enrollment-controller: duplicate identity)\n"}, []string{"not established"}},
		{"a denial replaced, its author not established", at(time.Hour), &enrollv1.WorkloadDenial{Reason: "duplicate identity", By: "credo-enrollment-controller"},
			"", []string{"(it replaces a denial: duplicate identity)\n",
				`Who denied it is not established: spec.denied.by says "credo-enrollment-controller", which names its writer only where the admission policy credo-workload-denials admitted it`},
			[]string{"denial by credo-enrollment-controller"}},
		{"a denial naming nobody replaced", at(time.Hour), &enrollv1.WorkloadDenial{Reason: "decommissioned in Git"}, "",
			[]string{"(it replaces a denial: decommissioned in Git)\n"}, []string{"not established", "denial by"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			wl.Status.NotAfter = tc.notAfter
			var out bytes.Buffer
			g.Expect(printDenied(&out, wl, tc.previous, tc.previousBy, now)).To(Succeed())
			for _, want := range tc.want {
				g.Expect(out.String()).To(ContainSubstring(want))
			}
			for _, not := range tc.not {
				g.Expect(out.String()).NotTo(ContainSubstring(not))
			}
		})
	}
}

// undeny names who denied only when that is established; what
// spec.denied.by says otherwise is printed as unverified, never as fact.
func TestWorkloadUndenyOutput(t *testing.T) {
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-demo", Name: "3f1c2b8e"},
		Spec:       enrollv1.WorkloadSpec{Policy: "web", Hostname: "vm-1"},
	}
	stolen := &enrollv1.WorkloadDenial{Reason: "laptop reported stolen", By: "ada"}
	cases := []struct {
		name       string
		previous   *enrollv1.WorkloadDenial
		previousBy string
		want, not  []string
	}{
		{"its author established", stolen, "ada", []string{
			"workload tenant-demo/3f1c2b8e (hostname vm-1, policy web) is no longer denied (was denied by ada: laptop reported stolen)\n",
			"Its next renewal is accepted again if its certificate (notAfter -) has not passed its policy's renewal grace",
		}, []string{"not established"}},
		{"its author not established", stolen, "", []string{
			"workload tenant-demo/3f1c2b8e (hostname vm-1, policy web) is no longer denied (was denied: laptop reported stolen)\n" +
				`Who denied it is not established: spec.denied.by says "ada", which names its writer only where the admission policy credo-workload-denials admitted it, ` +
				"and the enrollment-controller has not recorded that it did (status.deniedBy; the Ready condition says why).\n",
		}, []string{"denied by ada"}},
		{"a denial naming nobody", &enrollv1.WorkloadDenial{Reason: "decommissioned in Git"}, "",
			[]string{"is no longer denied (was denied: decommissioned in Git)\n"}, []string{"not established"}},
		{"no denial", nil, "", []string{"was not denied; nothing changed"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			g.Expect(printUndenied(&out, wl, tc.previous, tc.previousBy)).To(Succeed())
			for _, want := range tc.want {
				g.Expect(out.String()).To(ContainSubstring(want))
			}
			for _, not := range tc.not {
				g.Expect(out.String()).NotTo(ContainSubstring(not))
			}
		})
	}
}

// The author of a denial is the enrollment-controller's status.deniedBy,
// and only while it names spec.denied.by and the Ready condition, Denied,
// observed the Workload's current generation: never spec.denied.by alone.
func TestDeniedByIsTheControllersRecordOfTheCurrentDenial(t *testing.T) {
	ready := func(reason string, generation int64) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: generation}}
	}
	cases := []struct {
		name   string
		by     string
		status enrollv1.WorkloadStatus
		want   string
	}{
		{"established for the current generation", "ada", enrollv1.WorkloadStatus{DeniedBy: "ada", Conditions: ready(enrollv1.DeniedReason, 3)}, "ada"},
		{"nothing established", "ada", enrollv1.WorkloadStatus{Conditions: ready(enrollv1.DeniedReason, 3)}, ""},
		{"another author established", "mallory", enrollv1.WorkloadStatus{DeniedBy: "ada", Conditions: ready(enrollv1.DeniedReason, 3)}, ""},
		{"established for an earlier generation", "ada", enrollv1.WorkloadStatus{DeniedBy: "ada", Conditions: ready(enrollv1.DeniedReason, 2)}, ""},
		{"Ready not Denied", "ada", enrollv1.WorkloadStatus{DeniedBy: "ada", Conditions: ready(enrollv1.RenewedReason, 3)}, ""},
		{"no Ready", "ada", enrollv1.WorkloadStatus{DeniedBy: "ada"}, ""},
		{"a denial naming nobody", "", enrollv1.WorkloadStatus{DeniedBy: "ada", Conditions: ready(enrollv1.DeniedReason, 3)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl := &enrollv1.Workload{
				ObjectMeta: metav1.ObjectMeta{Generation: 3},
				Spec:       enrollv1.WorkloadSpec{Denied: &enrollv1.WorkloadDenial{Reason: "stolen", By: tc.by}},
				Status:     tc.status,
			}
			NewWithT(t).Expect(deniedBy(wl)).To(Equal(tc.want))
		})
	}
	NewWithT(t).Expect(deniedBy(&enrollv1.Workload{})).To(BeEmpty(), "not denied")
}

// label reads key=value and key- as kubectl label does and refuses, before
// anything is sent, what is neither, an invalid key or value, a key named
// twice, and a relabel that changes nothing.
func TestWorkloadLabelRefusesBadChangesBeforeContactingTheCluster(t *testing.T) {
	for args, want := range map[string]string{
		"":                      "nothing to change: name labels (key=value, key-) or --hostname",
		"role":                  `"role" is neither key=value (set a label) nor key- (remove one)`,
		"role=a role=b":         `label "role" is named twice`,
		"role=a role-":          `label "role" is named twice`,
		"bad/key/x=1":           `label key "bad/key/x" is not valid: `,
		"role=not%valid":        `the value of label "role" is not valid: `,
		"--hostname Not_A_Name": `--hostname "Not_A_Name" is not a DNS name: `,
	} {
		g := NewWithT(t)
		var out bytes.Buffer
		argv := append([]string{"workload", "label", "some-uuid", "--kubeconfig", "/nonexistent"}, strings.Fields(args)...)
		err := run(argv, strings.NewReader(""), &out)
		g.Expect(err).To(MatchError(HavePrefix(want)), "%q", args)
		g.Expect(out.Len()).To(BeZero())
	}
	ch, err := parseLabelChanges([]string{"role=api", "zone-", "tier="})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(ch.patch()).To(Equal(map[string]any{"role": "api", "zone": nil, "tier": ""}))
}
