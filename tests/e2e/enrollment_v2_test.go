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
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Exit codes of credo-agent (cmd/credo-agent).
const (
	exitReenrollment = 3
	exitDenied       = 4
)

// workloadEvents returns the reasons of the events recorded on a Workload.
func workloadEvents(t *testing.T, ns, id string) []string {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == id {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons
}

// waitEvent waits for an event of reason on the Workload.
func waitEvent(t *testing.T, ns, id, reason string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(workloadEvents(t, ns, id), reason) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s event on Workload %s/%s: %v", reason, ns, id, workloadEvents(t, ns, id))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func patchWorkload(t *testing.T, ns, id, patch string) {
	t.Helper()
	wl := &enrollv1.Workload{}
	wl.Name, wl.Namespace = id, ns
	mergePatch(t, wl, patch)
}

// mergePatch applies the JSON merge patch to obj, which names the object.
func mergePatch(t *testing.T, obj client.Object, patch string) {
	t.Helper()
	if err := k8s.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func TestDeniedAgentStopsAndRenewsAgainOnceLifted(t *testing.T) {
	e := needLocal(t)
	ns := enrollmentNamespace(t, "enroll-e2e-deny")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)

	a := newAgent(t, "agent-denied", token, caFile)
	a.start(t, e, true)
	c, _ := a.waitCert(t, nil, 30*time.Second)
	id := uuidOf(c)

	patchWorkload(t, ns, id, `{"spec":{"denied":{"reason":"host decommissioned"}}}`)
	if code := a.waitExit(t, ttl+5*time.Second); code != exitDenied {
		t.Fatalf("a denied agent exited %d, want %d:\n%s", code, exitDenied, a.log(t))
	}
	if log := a.log(t); !strings.Contains(log, enrollapi.ReasonDenied) || !strings.Contains(log, "host decommissioned") {
		t.Fatalf("the agent does not name the denial and its reason:\n%s", log)
	}
	waitEvent(t, ns, id, enrollv1.RenewalDeniedReason)

	// Lifted within the grace: the same agent, restarted with its state
	// directory and no token, renews as the same workload.
	patchWorkload(t, ns, id, `{"spec":{"denied":null}}`)
	a.start(t, e, false)
	renewed, _ := a.waitCert(t, c, ttl+grace)
	if uuidOf(renewed) != id {
		t.Fatal("the agent enrolled anew instead of renewing after the denial was lifted")
	}
	// And a fresh enrollment with the token works.
	b := newAgent(t, "agent-after-deny", token, caFile)
	b.start(t, e, true)
	b.waitCert(t, nil, 30*time.Second)
	if strings.Contains(a.log(t)+b.log(t), strings.SplitN(token, ".", 2)[1]) {
		t.Fatal("an agent logged the token's secret")
	}
}

// copyState copies an agent's state directory into a clone's: a cloned
// image holds the same key and certificate.
func copyState(t *testing.T, from, to *agent) {
	t.Helper()
	src, dst := filepath.Join(from.dir, "state"), filepath.Join(to.dir, "state")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(src, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := en.Info()
		if err := os.WriteFile(filepath.Join(dst, en.Name()), b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClonedAgentsAreDetectedAndHandledAsThePolicySays(t *testing.T) {
	e := needLocal(t)
	caFile, _ := anchorFile(t, 1)
	for _, tt := range []struct {
		action enrollv1.DuplicateAction
		// exits are the exit codes of the two copies, sorted; Record
		// leaves one running.
		exits []int
	}{
		{action: enrollv1.DuplicateForceReenroll, exits: []int{exitReenrollment, exitReenrollment}},
		{action: enrollv1.DuplicateDeny, exits: []int{exitReenrollment, exitDenied}},
		{action: enrollv1.DuplicateRecord, exits: []int{exitReenrollment}},
	} {
		t.Run(string(tt.action), func(t *testing.T) {
			ns := enrollmentNamespace(t, "enroll-e2e-dup-"+strings.ToLower(string(tt.action)))
			newEnrollmentPolicy(t, ns, ttl, grace)
			p := &enrollv1.EnrollmentPolicy{}
			p.Name, p.Namespace = "agents", ns
			mergePatch(t, p, fmt.Sprintf(`{"spec":{"onDuplicate":%q}}`, tt.action))
			token := createToken(t, e, ns, "agents")

			orig := newAgent(t, "agent-orig", token, caFile)
			orig.start(t, e, true)
			c, _ := orig.waitCert(t, nil, 30*time.Second)
			id := uuidOf(c)
			clone := newAgent(t, "agent-clone", token, caFile)
			copyState(t, orig, clone)
			clone.start(t, e, false)

			// Each copy renews at a time of its own: the second presents
			// the certificate the first replaced.
			var wl enrollv1.Workload
			deadline := time.Now().Add(2 * ttl)
			for {
				if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &wl); err == nil && wl.Status.Duplicate != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no duplicate identity recorded:\norig:\n%s\nclone:\n%s", orig.log(t), clone.log(t))
				}
				time.Sleep(100 * time.Millisecond)
			}
			d := wl.Status.Duplicate
			hosts := []string{d.Current.Hostname, d.Presented.Hostname}
			slices.Sort(hosts)
			if d.Action != tt.action || d.Current.Serial == d.Presented.Serial ||
				!slices.Equal(hosts, []string{"agent-clone.vm.example.org", "agent-orig.vm.example.org"}) || d.Presented.Address == "" {
				t.Fatalf("the duplicate record is %+v", d)
			}
			waitEvent(t, ns, id, enrollv1.DuplicateIdentityEventReason)

			var exits []int
			var running *agent
			for _, a := range []*agent{orig, clone} {
				deadline := time.Now().Add(ttl + 5*time.Second)
				for {
					if ok, _ := a.proc.Exited(); ok {
						exits = append(exits, a.waitExit(t, time.Second))
						break
					}
					if time.Now().After(deadline) {
						running = a
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			slices.Sort(exits)
			if !slices.Equal(exits, tt.exits) {
				t.Fatalf("exit codes %v, want %v:\norig:\n%s\nclone:\n%s", exits, tt.exits, orig.log(t), clone.log(t))
			}
			for _, a := range []*agent{orig, clone} {
				if a != running && !strings.Contains(a.log(t), enrollapi.ReasonDuplicateIdentity) &&
					!strings.Contains(a.log(t), enrollapi.ReasonDenied) && !strings.Contains(a.log(t), enrollapi.ReasonNotCurrent) {
					t.Fatalf("%s does not name why it stopped:\n%s", a.name, a.log(t))
				}
			}
			switch tt.action {
			case enrollv1.DuplicateRecord:
				// The holder of the latest certificate keeps renewing.
				cur, _ := running.cert()
				running.waitCert(t, cur, ttl+5*time.Second)
			case enrollv1.DuplicateForceReenroll:
				// Each copy enrolls again with a token and gets its own UUID.
				orig.start(t, e, true)
				clone.start(t, e, true)
				a, b := orig.waitIdentityOtherThan(t, id), clone.waitIdentityOtherThan(t, id)
				if uuidOf(a) == uuidOf(b) {
					t.Fatalf("after re-enrolling the copies are %s and %s (the duplicate was %s)", uuidOf(a), uuidOf(b), id)
				}
			}
		})
	}
}

// waitIdentityOtherThan waits for a certificate of another workload than id.
func (a *agent) waitIdentityOtherThan(t *testing.T, id string) *x509.Certificate {
	t.Helper()
	c, _ := a.waitCertWhere(t, 30*time.Second, func(c *x509.Certificate) bool { return uuidOf(c) != id }, " did not enroll anew within 30s")
	return c
}

// TestLostRenewalAnswer drops the answer to an agent's renewal on its way
// back (the server served it: the Workload records the new certificate);
// the agent retries the same request and gets that certificate, not a
// refusal as a duplicate of itself.
func TestLostRenewalAnswerIsAnsweredWithTheSameCertificate(t *testing.T) {
	e := needLocal(t)
	ns := enrollmentNamespace(t, "enroll-e2e-lost")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)
	proxy := startDropProxy(t, strings.TrimPrefix(e.EnrollmentURL, "https://"))

	a := newAgent(t, "agent-lost", token, caFile, "--bundle-poll-interval=0")
	a.server = "https://" + proxy.addr()
	a.start(t, e, true)
	c, _ := a.waitCert(t, nil, 30*time.Second)
	id := uuidOf(c)
	proxy.dropNextAnswer()
	renewed, _ := a.waitCert(t, c, ttl+grace)
	if proxy.dropped() == 0 {
		t.Fatalf("the proxy dropped no answer:\n%s", a.log(t))
	}
	if uuidOf(renewed) != id {
		t.Fatal("the agent enrolled anew")
	}
	var wl enrollv1.Workload
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &wl); err != nil {
		t.Fatal(err)
	}
	if wl.Status.Serial != fmt.Sprintf("%x", renewed.SerialNumber) || wl.Status.Renewals != 1 || wl.Status.Duplicate != nil {
		t.Fatalf("the registry does not name the one certificate issued: serial %s renewals %d duplicate %+v (agent holds %x)",
			wl.Status.Serial, wl.Status.Renewals, wl.Status.Duplicate, renewed.SerialNumber)
	}
	waitEvent(t, ns, id, enrollv1.RenewalRetriedReason)
	// And it goes on renewing.
	a.waitCert(t, renewed, ttl+5*time.Second)
}
