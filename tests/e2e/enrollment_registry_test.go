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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
)

// agentState is what a credo-agent keeps in its state.json of its workload's
// attributes.
type agentState struct {
	UUID     string            `json:"uuid"`
	Labels   map[string]string `json:"labels"`
	Hostname string            `json:"hostname"`
}

func (a *agent) state(t *testing.T) agentState {
	t.Helper()
	var st agentState
	if b, err := os.ReadFile(filepath.Join(a.dir, "state", "state.json")); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	return st
}

// A relabel reaches a running agent at its next renewal, without
// re-enrollment (seed 001: "Mutable attributes (hostname, labels) stay in
// the registry"): the real enrollment server establishes the enrolled
// labels with the first certificate, the enrollment-controller establishes
// the relabel (written as the platform, which holds the verb relabel, in
// its own name, through config/admission's credo-workload-attributes) and
// records it, and the next certificate's answer carries the new labels and
// hostname into the agent's state. The certificate still carries only the
// workload's URI.
func TestRelabelIsReflectedOnTheNextRenewalWithoutReenrollment(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	ns := enrollmentNamespace(t, "enroll-e2e-relabel")
	if err := k8s.Create(ctx, &enrollv1.EnrollmentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: ns},
		Spec: enrollv1.EnrollmentPolicySpec{
			AllowedLabels:  []enrollv1.LabelRule{{Key: "role", Values: []string{"web", "api"}}},
			CertificateTTL: &metav1.Duration{Duration: ttl},
			RenewalGrace:   &metav1.Duration{Duration: grace},
		},
	}); err != nil {
		t.Fatal(err)
	}
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)
	a := newAgent(t, "agent-relabel", token, caFile, "--label=role=web")
	a.start(t, e, true)
	first, _ := a.waitCert(t, nil, 30*time.Second)
	id := uuidOf(first)

	workload := func(match func(*enrollv1.Workload) bool, what string) *enrollv1.Workload {
		t.Helper()
		wl := &enrollv1.Workload{}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, wl); err == nil && match(wl) {
				return wl
			}
			if time.Now().After(deadline) {
				t.Fatalf("workload %s: %s; status labels %v, history %d", id, what, wl.Status.Labels, len(wl.Status.AttributeHistory))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	workload(func(w *enrollv1.Workload) bool { return maps.Equal(w.Status.Labels, map[string]string{"role": "web"}) },
		"the enrolled labels are established with the first certificate")
	if st := a.state(t); st.UUID != id || !maps.Equal(st.Labels, map[string]string{"role": "web"}) || st.Hostname != "agent-relabel.vm.example.org" {
		t.Fatalf("the agent's state after enrolling: %+v", st)
	}

	user, err := caller.Username(ctx, k8s)
	if err != nil {
		t.Fatal(err)
	}
	patchWorkload(t, ns, id, fmt.Sprintf(`{"spec":{"labels":{"role":"api"},"hostname":"api-1.vm.example.org","changedBy":%q}}`, user))
	wl := workload(func(w *enrollv1.Workload) bool {
		return maps.Equal(w.Status.Labels, map[string]string{"role": "api"}) && len(w.Status.AttributeHistory) == 1
	}, "the relabel is established and recorded")
	if h := wl.Status.AttributeHistory[0]; !maps.Equal(h.PreviousLabels, map[string]string{"role": "web"}) ||
		h.PreviousHostname != "agent-relabel.vm.example.org" {
		t.Fatalf("the relabel's record: %+v", h)
	}

	// The renewal after the relabel was established carries it.
	deadline := time.Now().Add(3 * ttl)
	for st := a.state(t); !maps.Equal(st.Labels, map[string]string{"role": "api"}) || st.Hostname != "api-1.vm.example.org"; st = a.state(t) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's state %+v has not got the relabel within %s:\n%s", st, 3*ttl, a.log(t))
		}
		time.Sleep(200 * time.Millisecond)
	}
	renewed, _ := a.cert()
	if uuidOf(renewed) != id || renewed.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatalf("the relabel reached the agent by another enrollment (uuid %s, want %s) or without a renewal", uuidOf(renewed), id)
	}
	if len(renewed.URIs) != 1 || len(renewed.DNSNames) != 0 {
		t.Fatalf("the renewed certificate carries more than the workload's URI: %v %v", renewed.URIs, renewed.DNSNames)
	}
	if !strings.Contains(a.log(t), "the registry's labels or hostname of the workload changed") {
		t.Fatalf("the agent did not say its attributes changed:\n%s", a.log(t))
	}
}
