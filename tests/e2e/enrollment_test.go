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
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/devenv"
)

const (
	// ttl and grace are short so that renewals happen while the test watches.
	ttl   = 8 * time.Second
	grace = 10 * time.Second
)

func enrollmentNamespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// checkRenewedInLastThird asserts next was written in the last third of
// prev's lifetime (x509 times have a resolution of one second).
func checkRenewedInLastThird(t *testing.T, who string, prev *x509.Certificate, at time.Time) {
	t.Helper()
	life := prev.NotAfter.Sub(prev.NotBefore)
	start := prev.NotBefore.Add(life * 2 / 3)
	if at.Before(start.Add(-time.Second)) || at.After(prev.NotAfter.Add(time.Second)) {
		t.Fatalf("%s renewed at %s, outside the last third [%s, %s] of the previous certificate",
			who, at.Format(time.StampMilli), start.Format(time.StampMilli), prev.NotAfter.Format(time.StampMilli))
	}
}

func TestAgentsEnrollRenewAndSurviveARestartAndACARotation(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	ns := enrollmentNamespace(t, "enroll-e2e")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, anchor := anchorFile(t, 1)

	web := newAgent(t, "agent-web", token, caFile, "--label=role=web")
	web.start(t, e, true)
	first, _ := web.waitCert(t, nil, 30*time.Second)

	// One URI SAN, the policy's TTL, verified by the published anchor.
	id := uuidOf(first)
	if id == "" || first.URIs[0].String() != "credo://workload/"+id || len(first.DNSNames)+len(first.IPAddresses)+len(first.EmailAddresses) != 0 {
		t.Fatalf("certificate SANs: URIs %v DNS %v IP %v", first.URIs, first.DNSNames, first.IPAddresses)
	}
	if life := first.NotAfter.Sub(first.NotBefore); life < ttl-time.Second || life > ttl+2*time.Second {
		t.Fatalf("lifetime %s, want the policy's %s", life, ttl)
	}
	if err := verifies(first, anchor, time.Now()); err != nil {
		t.Fatalf("the certificate does not verify against the published trust anchor: %v", err)
	}
	var wl enrollv1.Workload
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, &wl); err != nil {
		t.Fatalf("no Workload for %s: %v", id, err)
	}
	if wl.Spec.Hostname != "agent-web.vm.example.org" || wl.Spec.Labels["role"] != "web" {
		t.Fatalf("registry entry %+v", wl.Spec)
	}
	// The server writes the tokens' uses once a second.
	var jt enrollv1.JoinToken
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: strings.SplitN(token, ".", 2)[0]}, &jt)
		if (err == nil && jt.Status.Uses == 1 && jt.Status.LastWorkload == id) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || jt.Status.Uses != 1 || jt.Status.LastWorkload != id {
		t.Fatalf("the token's use is not recorded (%v): %+v", err, jt.Status)
	}

	// Two renewals, each in the last third of the lifetime before it.
	prev := first
	for i := range 2 {
		next, at := web.waitCert(t, prev, ttl+5*time.Second)
		checkRenewedInLastThird(t, fmt.Sprintf("renewal %d", i+1), prev, at)
		if uuidOf(next) != id {
			t.Fatal("a renewal changed the identity")
		}
		prev = next
	}

	// The enrollment controller restarts; the agent keeps renewing.
	if err := e.RestartController(ctx, "enrollment-controller"); err != nil {
		t.Fatal(err)
	}
	prev, _ = web.waitCert(t, prev, ttl+grace)
	prev, _ = web.waitCert(t, prev, ttl+5*time.Second)

	// CA rotation: the bundle grows to both CAs, the agent keeps renewing,
	// and its new certificates come from the new CA.
	oldCA := anchor[0]
	var caSecret corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: "credo-enrollment-ca"}, &caSecret); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"annotations":{"enrollment.credo.dev/rotate-requested-at":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
	if err := k8s.Patch(ctx, &caSecret, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * ttl)
	for len(web.bundle(t)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's bundle did not pick up the new CA:\n%s", web.log(t))
		}
		prev, _ = web.waitCert(t, prev, ttl+5*time.Second)
	}
	bundle := web.bundle(t)
	if !bundle[0].Equal(oldCA) && !bundle[1].Equal(oldCA) {
		t.Fatal("the old CA left the bundle during the overlap")
	}
	rotated, _ := web.waitCert(t, prev, ttl+5*time.Second)
	if err := verifies(rotated, bundle, time.Now()); err != nil {
		t.Fatalf("a certificate after the rotation does not verify against the agent's bundle: %v", err)
	}
	if err := verifies(rotated, []*x509.Certificate{oldCA}, time.Now()); err == nil {
		t.Fatal("after the rotation the old CA still signs")
	}
	if _, published := anchorFile(t, 2); len(published) != 2 {
		t.Fatal("the trust anchor does not carry both CAs during the overlap")
	}
	if strings.Contains(web.log(t), strings.SplitN(token, ".", 2)[1]) {
		t.Fatal("the agent logged the token's secret")
	}
}

func TestExpiredAgentRenewsWithinTheGraceAndReenrollsBeyondIt(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	ns := enrollmentNamespace(t, "enroll-e2e-grace")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)

	a := newAgent(t, "agent-grace", token, caFile)
	a.start(t, e, true)
	c, _ := a.waitCert(t, nil, 30*time.Second)
	_ = a.proc.Stop(5 * time.Second)

	// Down past expiry, back within the grace: it renews, same identity, no token.
	time.Sleep(time.Until(c.NotAfter.Add(2 * time.Second)))
	a.start(t, e, false)
	renewed, _ := a.waitCert(t, c, 20*time.Second)
	if uuidOf(renewed) != uuidOf(c) {
		t.Fatal("an expired-within-grace agent enrolled anew instead of renewing")
	}
	var wl enrollv1.Workload
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuidOf(c)}, &wl); err != nil || wl.Status.Renewals < 1 {
		t.Fatalf("the renewal is not recorded (%v): %+v", err, wl.Status)
	}
	_ = a.proc.Stop(5 * time.Second)

	// Down beyond the grace: it exits, saying a new token is needed.
	time.Sleep(time.Until(renewed.NotAfter.Add(grace + 2*time.Second)))
	a.start(t, e, false)
	if code := a.waitExit(t, 30*time.Second); code != 3 {
		t.Fatalf("exit code %d, want 3 (re-enrollment required):\n%s", code, a.log(t))
	}
	if log := a.log(t); !strings.Contains(log, "token create") {
		t.Fatalf("the agent does not say how to re-enroll:\n%s", log)
	}
}

func TestAgentRefusalsAreClear(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	ns := enrollmentNamespace(t, "enroll-e2e-refusals")
	newEnrollmentPolicy(t, ns, time.Hour, time.Hour)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)

	labels := newAgent(t, "agent-bad-labels", token, caFile, "--label=role=db")
	labels.start(t, e, true)
	if code := labels.waitExit(t, 30*time.Second); code == 0 {
		t.Fatal("an agent asking for a label outside the policy exited 0")
	}
	if log := labels.log(t); !strings.Contains(log, "LabelsNotAllowed") {
		t.Fatalf("the refusal does not name its reason:\n%s", log)
	}

	var jt enrollv1.JoinToken
	key := client.ObjectKey{Namespace: ns, Name: strings.SplitN(token, ".", 2)[0]}
	if err := k8s.Get(ctx, key, &jt); err != nil {
		t.Fatal(err)
	}
	if jt.Status.Uses != 0 {
		t.Fatalf("a refused enrollment was recorded as a use: %+v", jt.Status)
	}
	jt.Spec.Revoked = true
	if err := k8s.Update(ctx, &jt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the server reads tokens from its cache
	revoked := newAgent(t, "agent-revoked", token, caFile)
	revoked.start(t, e, true)
	if code := revoked.waitExit(t, 30*time.Second); code == 0 {
		t.Fatal("an agent with a revoked token exited 0")
	}
	if log := revoked.log(t); !strings.Contains(log, "TokenRevoked") {
		t.Fatalf("the refusal does not name its reason:\n%s", log)
	}

	// A deleted token is unknown: the same 401 as a wrong secret, and the
	// agent stops for a new token (exit 3) instead of retrying.
	if err := k8s.Delete(ctx, &jt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the server reads tokens from its cache
	deleted := newAgent(t, "agent-deleted-token", token, caFile)
	deleted.start(t, e, true)
	if code := deleted.waitExit(t, 30*time.Second); code != 3 {
		t.Fatalf("an agent with a deleted token exited %d, want 3 (re-enrollment required):\n%s", code, deleted.log(t))
	}
	if log := deleted.log(t); !strings.Contains(log, "TokenInvalid") || strings.Contains(log, "Index with name") {
		t.Fatalf("the refusal is not TokenInvalid:\n%s", log)
	}
}

func TestEnrollmentCAIsPublishedAsATrustAnchor(t *testing.T) {
	needLocal(t)
	ctx := context.Background()
	var ta trustv1.TrustAnchor
	deadline := time.Now().Add(time.Minute)
	for {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: devenv.InstallRelease}, &ta)
		if err == nil && conditions.IsReady(&ta) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("TrustAnchor %s/%s is not Ready (%v): %+v", devenv.PlatformNamespace, devenv.InstallRelease, err, ta.Status.Conditions)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Declared by the enrollment-controller and owned by itself: no
	// HelmRelease of the name exists, as on every install.
	if ta.Spec.Source.Name != "credo-enrollment-ca" || ta.Status.Leg != trustv1.LegDeclared || ta.GetOwnerKind() != trustv1.OwnerTrustAnchor {
		t.Fatalf("the anchor is lifted from %s on leg %s, owned by %s; want credo-enrollment-ca, declared, owned by the TrustAnchor",
			ta.Spec.Source.Name, ta.Status.Leg, ta.GetOwnerKind())
	}
	var projection corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: devenv.InstallRelease + ".tenant-ca"}, &projection); err != nil {
		t.Fatal(err)
	}
	if len(projection.Data) != 1 || len(projection.Data["ca.crt"]) == 0 {
		t.Fatalf("the projection holds keys %v, want ca.crt alone", keysOf(projection.Data))
	}
	if refs := projection.OwnerReferences; len(refs) != 1 || refs[0].UID != ta.UID {
		t.Fatalf("the projection is owned by %v, want the TrustAnchor alone", refs)
	}
	if n, ok := s0(projection.Data["ca.crt"]); !ok || n < 1 {
		t.Fatal("the projection holds something other than certificates")
	}
}

func keysOf(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
