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

package enrollment

import (
	"path/filepath"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/credo-dev/credo/tests/controlplane"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

func newPolicy(t *testing.T, ns, name string, mutate ...func(*enrollv1.EnrollmentPolicy)) *enrollv1.EnrollmentPolicy {
	t.Helper()
	p := &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, m := range mutate {
		m(p)
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), p)).To(Succeed())
	return p
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// randomHex returns n random bytes, hex encoded.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// newJoinToken records a join token of policy, as the access API does: only
// the hash of a secret nobody keeps.
func newJoinToken(t *testing.T, ns, policy string, expiresAt time.Time, revoked bool) *enrollv1.JoinToken {
	t.Helper()
	sum := sha256.Sum256([]byte(randomHex(t, 32)))
	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: randomHex(t, 6), Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{
			Policy: policy, SecretHash: "sha256:" + hex.EncodeToString(sum[:]),
			ExpiresAt: metav1.NewTime(expiresAt), Revoked: revoked,
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), jt)).To(Succeed())
	return jt
}

// newWorkloadUUID returns a random UUID (version 4), the form of a Workload's name.
func newWorkloadUUID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newWorkload registers a workload of policy, as enrollment step 1 does.
func newWorkload(t *testing.T, ns, policy string) *enrollv1.Workload {
	t.Helper()
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: newWorkloadUUID(t), Namespace: ns},
		Spec:       enrollv1.WorkloadSpec{Policy: policy, Token: "tok123", Hostname: "vm-1.example.org"},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), wl)).To(Succeed())
	return wl
}

// enrollWorkload records a certificate valid until notAfter in the
// workload's status, as enrollment step 2 does.
func enrollWorkload(t *testing.T, wl *enrollv1.Workload, notAfter time.Time) {
	t.Helper()
	nb, na := metav1.NewTime(notAfter.Add(-time.Hour)), metav1.NewTime(notAfter)
	wl.Status.Serial = randomHex(t, 16)
	wl.Status.NotBefore, wl.Status.NotAfter, wl.Status.EnrolledAt = &nb, &na, &nb
	wl.Status.Conditions = []metav1.Condition{{
		Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: enrollv1.EnrolledReason,
		Message: "enrolled; certificate issued", LastTransitionTime: metav1.Now(),
	}}
	NewWithT(t).Expect(env.Client.Status().Update(context.Background(), wl)).To(Succeed())
}

// newEnrolledWorkload registers a workload and records a certificate valid for an hour.
func newEnrolledWorkload(t *testing.T, ns, policy string) *enrollv1.Workload {
	t.Helper()
	wl := newWorkload(t, ns, policy)
	enrollWorkload(t, wl, time.Now().Add(time.Hour))
	return wl
}

func policyWith(g Gomega, ns, name string, match func(*enrollv1.EnrollmentPolicy) bool) *enrollv1.EnrollmentPolicy {
	var p enrollv1.EnrollmentPolicy
	g.Eventually(func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
			return false
		}
		return match(&p)
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "EnrollmentPolicy %s/%s status: %+v", ns, name, &p.Status)
	return &p
}

// policyCounts matches a reconciled, Ready policy with these counts.
func policyCounts(tokens, enrollments int32) func(*enrollv1.EnrollmentPolicy) bool {
	return func(p *enrollv1.EnrollmentPolicy) bool {
		return conditions.IsReady(p) && p.Status.ObservedGeneration == p.Generation &&
			p.Status.Tokens == tokens && p.Status.Enrollments == enrollments
	}
}

// eventsOf returns the events about the named object with the reason.
func eventsOf(g Gomega, ns, name, reason string) []corev1.Event {
	var list corev1.EventList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func TestPolicyCountsUsableTokensAndItsWorkloads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web")
	p := policyWith(g, ns, "web", policyCounts(0, 0))
	g.Expect(conditions.GetReason(p, meta.ReadyCondition)).To(Equal(meta.SucceededReason))
	g.Expect(conditions.GetMessage(p, meta.ReadyCondition)).To(Equal("0 token(s) can enroll; 0 workload(s)"))
	g.Expect(testenv.KStatus(t, p)).To(Equal(status.CurrentStatus))

	later := time.Now().Add(time.Hour)
	a := newJoinToken(t, ns, "web", later, false)
	newJoinToken(t, ns, "web", later, false)
	newJoinToken(t, ns, "web", later, true)                         // revoked
	newJoinToken(t, ns, "web", time.Now().Add(-time.Minute), false) // expired
	newJoinToken(t, ns, "other", later, false)                      // another policy
	newJoinToken(t, env.NewNamespace(t), "web", later, false)       // another namespace
	policyWith(g, ns, "web", policyCounts(2, 0))

	w1 := newEnrolledWorkload(t, ns, "web")
	newEnrolledWorkload(t, ns, "web")
	newEnrolledWorkload(t, ns, "other")
	p = policyWith(g, ns, "web", policyCounts(2, 2))
	g.Expect(conditions.GetMessage(p, meta.ReadyCondition)).To(Equal("2 token(s) can enroll; 2 workload(s)"))

	before := a.DeepCopy()
	a.Spec.Revoked = true
	g.Expect(env.Client.Patch(ctx, a, client.MergeFrom(before))).To(Succeed())
	policyWith(g, ns, "web", policyCounts(1, 2))

	g.Expect(env.Client.Delete(ctx, w1)).To(Succeed())
	policyWith(g, ns, "web", policyCounts(1, 1))
}

func TestPolicyTokenCountDropsWhenATokenExpires(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "db")
	policyWith(g, ns, "db", policyCounts(0, 0))
	// expiresAt is stored to the second.
	expires := time.Now().Truncate(time.Second).Add(4 * time.Second)
	newJoinToken(t, ns, "db", expires, false)
	newJoinToken(t, ns, "db", time.Now().Add(time.Hour), false)
	policyWith(g, ns, "db", policyCounts(2, 0))

	// Nothing but the requeue at the expiry reconciles the policy now.
	g.Consistently(func() int32 {
		var p enrollv1.EnrollmentPolicy
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &p)).To(Succeed())
		return p.Status.Tokens
	}, time.Until(expires)-500*time.Millisecond, 100*time.Millisecond).Should(Equal(int32(2)), "counted while unexpired")
	policyWith(g, ns, "db", policyCounts(1, 0))
	g.Expect(time.Now()).To(BeTemporally(">=", expires))
	g.Expect(time.Since(expires)).To(BeNumerically("<", 5*time.Second), "the drop is seen at the expiry, by requeue")
}

func TestRevokedPolicyIsStalled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "edge", func(p *enrollv1.EnrollmentPolicy) { p.Spec.Revoked = true })
	newJoinToken(t, ns, "edge", time.Now().Add(time.Hour), false)
	newEnrolledWorkload(t, ns, "edge")

	p := policyWith(g, ns, "edge", func(p *enrollv1.EnrollmentPolicy) bool {
		return conditions.IsFalse(p, meta.ReadyCondition) && p.Status.ObservedGeneration == p.Generation &&
			p.Status.Tokens == 1 && p.Status.Enrollments == 1
	})
	g.Expect(conditions.GetReason(p, meta.ReadyCondition)).To(Equal(enrollv1.PolicyRevokedReason))
	g.Expect(conditions.GetMessage(p, meta.ReadyCondition)).To(
		Equal("policy is revoked: its 1 token(s) enroll nothing and its 1 workload(s) renew nothing"))
	// Terminal until its spec changes: Stalled with its reason, so that
	// kstatus (and a Flux health check) ends with Failed instead of waiting
	// forever on InProgress.
	g.Expect(conditions.IsStalled(p)).To(BeTrue())
	g.Expect(conditions.GetReason(p, meta.StalledCondition)).To(Equal(enrollv1.PolicyRevokedReason))
	g.Expect(conditions.IsReconciling(p)).To(BeFalse())
	g.Expect(testenv.KStatus(t, p)).To(Equal(status.FailedStatus))
	// An operator's decision, not a fault: a Normal event.
	g.Eventually(func() []corev1.Event { return eventsOf(g, ns, "edge", enrollv1.PolicyRevokedReason) },
		10*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty())
	g.Expect(eventsOf(g, ns, "edge", enrollv1.PolicyRevokedReason)[0].Type).To(Equal(corev1.EventTypeNormal))

	g.Expect(env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"revoked":false}}`)))).To(Succeed())
	p = policyWith(g, ns, "edge", policyCounts(1, 1))
	g.Expect(conditions.GetReason(p, meta.ReadyCondition)).To(Equal(meta.SucceededReason))
	g.Expect(conditions.IsStalled(p)).To(BeFalse())
	g.Expect(testenv.KStatus(t, p)).To(Equal(status.CurrentStatus))
}

func TestInvalidDurationsAreRefusedByTheAPIServer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		mutate  func(*enrollv1.EnrollmentPolicy)
		message string
	}{
		{
			name:    "a certificate TTL under five seconds",
			mutate:  func(p *enrollv1.EnrollmentPolicy) { p.Spec.CertificateTTL = duration(2 * time.Second) },
			message: "certificateTTL must be at least 5s",
		},
		{
			name:    "a renewal grace over a week",
			mutate:  func(p *enrollv1.EnrollmentPolicy) { p.Spec.RenewalGrace = duration(200 * time.Hour) },
			message: "renewalGrace must be at most 168h",
		},
		{
			name:    "a zero token lifetime",
			mutate:  func(p *enrollv1.EnrollmentPolicy) { p.Spec.TokenLifetime = duration(0) },
			message: "tokenLifetime must be positive",
		},
		{
			name:    "a ten-year certificate TTL",
			mutate:  func(p *enrollv1.EnrollmentPolicy) { p.Spec.CertificateTTL = duration(87600 * time.Hour) },
			message: "certificateTTL must be at most 2160h",
		},
		{
			name:    "a token lifetime over a year",
			mutate:  func(p *enrollv1.EnrollmentPolicy) { p.Spec.TokenLifetime = duration(9000 * time.Hour) },
			message: "tokenLifetime must be at most 8760h",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := env.NewNamespace(t)
			p := &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}}
			tt.mutate(p)
			err := env.Client.Create(context.Background(), p)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}
}

// A policy within the CRD's bounds but over the platform's maxima (the
// enrollment-controller's --max-* flags, here their defaults) is Stalled
// with ExceedsPlatformLimit, naming each field, with a Warning event; it
// recovers once lowered.
func TestAPolicyOverThePlatformMaximaIsStalled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "long", func(p *enrollv1.EnrollmentPolicy) {
		p.Spec.CertificateTTL = duration(2000 * time.Hour)
		p.Spec.TokenLifetime = duration(8000 * time.Hour)
		p.Spec.RenewalGrace = duration(100 * time.Hour)
	})
	p := policyWith(g, ns, "long", func(p *enrollv1.EnrollmentPolicy) bool {
		return p.Status.ObservedGeneration == p.Generation && conditions.IsStalled(p)
	})
	g.Expect(conditions.GetReason(p, meta.StalledCondition)).To(Equal(enrollv1.ExceedsPlatformLimitReason))
	g.Expect(conditions.IsFalse(p, meta.ReadyCondition)).To(BeTrue())
	g.Expect(conditions.GetReason(p, meta.ReadyCondition)).To(Equal(enrollv1.ExceedsPlatformLimitReason))
	msg := conditions.GetMessage(p, meta.ReadyCondition)
	for _, want := range []string{"spec.certificateTTL 2000h0m0s", "168h0m0s", "--max-certificate-ttl",
		"spec.tokenLifetime 8000h0m0s", "720h0m0s", "spec.renewalGrace 100h0m0s", "24h0m0s"} {
		g.Expect(msg).To(ContainSubstring(want))
	}
	g.Expect(testenv.KStatus(t, p)).To(Equal(status.FailedStatus))
	g.Eventually(func() []corev1.Event {
		return eventsOf(g, ns, "long", enrollv1.ExceedsPlatformLimitReason)
	}, 10*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty())

	g.Expect(env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"certificateTTL":"168h","tokenLifetime":"720h","renewalGrace":"24h"}}`)))).To(Succeed())
	p = policyWith(g, ns, "long", func(p *enrollv1.EnrollmentPolicy) bool {
		return p.Status.ObservedGeneration == p.Generation && conditions.IsReady(p)
	})
	g.Expect(conditions.IsStalled(p)).To(BeFalse())
}

func TestPolicyReconcileRequestIsHandled(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "ops")
	p := policyWith(g, ns, "ops", policyCounts(0, 0))
	g.Expect(env.Client.Patch(context.Background(), p, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+meta.ReconcileRequestAnnotation+`":"now-1"}}}`)))).To(Succeed())
	policyWith(g, ns, "ops", func(p *enrollv1.EnrollmentPolicy) bool {
		return p.Status.LastHandledReconcileAt == "now-1"
	})
}

func TestEnrollmentSampleIsAcceptedAndReady(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "samples", "enrollment", "policy.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed())
	g.Expect(u.GetNamespace()).To(Equal("tenant-demo"))
	ns := env.NewNamespace(t)
	u.SetNamespace(ns)
	// Strict field validation: a field the CRD does not know fails the create.
	g.Expect(env.Client.Create(context.Background(), u, client.FieldValidation("Strict"))).To(Succeed())

	p := policyWith(g, ns, u.GetName(), policyCounts(0, 0))
	g.Expect(p.GetCertificateTTL()).To(Equal(24 * time.Hour))
	g.Expect(p.GetRenewalGrace()).To(Equal(time.Hour))
	g.Expect(p.GetTokenLifetime()).To(Equal(24 * time.Hour))
	g.Expect(p.Spec.AllowedLabels).To(Equal([]enrollv1.LabelRule{{Key: "role", Values: []string{"web", "db"}}, {Key: "env"}}))
}
