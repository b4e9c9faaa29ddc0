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
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

func workloadWith(g Gomega, wl *enrollv1.Workload, within time.Duration, match func(*enrollv1.Workload) bool) *enrollv1.Workload {
	var got enrollv1.Workload
	g.Eventually(func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &got); err != nil {
			return false
		}
		return match(&got)
	}, within, 100*time.Millisecond).Should(BeTrue(), "Workload %s/%s conditions: %+v", wl.Namespace, wl.Name, &got.Status.Conditions)
	return &got
}

func readyReason(status, reason string) func(*enrollv1.Workload) bool {
	return func(w *enrollv1.Workload) bool {
		c := conditions.Get(w, meta.ReadyCondition)
		return c != nil && string(c.Status) == status && c.Reason == reason
	}
}

func workloadExists(g Gomega, wl *enrollv1.Workload) func() bool {
	return func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &enrollv1.Workload{})
		if apierrors.IsNotFound(err) {
			return false
		}
		g.Expect(err).NotTo(HaveOccurred())
		return true
	}
}

// Step 1 writes no status: a registration gets Ready False Pending only once
// it has waited PendingMarkDelay for its certificate request.
func TestARegistrationLeftWaitingIsMarkedPending(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web")
	wl := newWorkload(t, ns, "web")
	created := wl.CreationTimestamp.Time

	g.Consistently(func() bool {
		var got enrollv1.Workload
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &got)).To(Succeed())
		return conditions.Get(&got, meta.ReadyCondition) == nil
	}, time.Until(created.Add(testPendingMarkDelay))-500*time.Millisecond, 100*time.Millisecond).
		Should(BeTrue(), "marked while step 2 may still come at once")
	workloadWith(g, wl, 3*time.Second, readyReason("False", enrollv1.PendingReason))
}

func TestPendingWorkloadIsDeletedAfterThePendingTimeout(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web")
	wl := newWorkload(t, ns, "web")
	created := wl.CreationTimestamp.Time

	g.Consistently(workloadExists(g, wl), time.Until(created.Add(testPendingTimeout))-time.Second, 100*time.Millisecond).
		Should(BeTrue(), "kept while step 2 may still come")
	g.Eventually(workloadExists(g, wl), 10*time.Second, 100*time.Millisecond).Should(BeFalse(), "deleted after the pending timeout")
	g.Expect(time.Now()).To(BeTemporally(">=", created.Add(testPendingTimeout)))
	g.Eventually(func() []corev1.Event { return eventsOf(g, ns, wl.Name, enrollv1.PendingTimeoutReason) },
		10*time.Second, 100*time.Millisecond).Should(HaveLen(1))
	ev := eventsOf(g, ns, wl.Name, enrollv1.PendingTimeoutReason)[0]
	g.Expect(ev.Type).To(Equal(corev1.EventTypeNormal))
	g.Expect(ev.Message).To(ContainSubstring("no certificate requested within 4s"))
}

func TestEnrolledWorkloadIsNotCollected(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web")
	wl := newEnrolledWorkload(t, ns, "web")
	g.Consistently(workloadExists(g, wl), testPendingTimeout+2*time.Second, 200*time.Millisecond).Should(BeTrue())
	got := workloadWith(g, wl, time.Second, readyReason("True", enrollv1.EnrolledReason))
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(Equal("enrolled; certificate issued"),
		"the enrollment server's condition is left as it wrote it")
}

func TestWorkloadExpiresWhenTheRenewalGraceEnds(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "db", func(p *enrollv1.EnrollmentPolicy) { p.Spec.RenewalGrace = duration(2 * time.Second) })
	wl := newWorkload(t, ns, "db")
	// notAfter is stored to the second.
	notAfter := time.Now().Truncate(time.Second).Add(3 * time.Second)
	enrollWorkload(t, wl, notAfter)
	deadline := notAfter.Add(2 * time.Second)

	g.Consistently(func() bool {
		return readyReason("True", enrollv1.EnrolledReason)(workloadWith(g, wl, time.Second, func(*enrollv1.Workload) bool { return true }))
	}, time.Until(deadline)-500*time.Millisecond, 100*time.Millisecond).Should(BeTrue(), "renewable within the grace")
	got := workloadWith(g, wl, 8*time.Second, readyReason("False", enrollv1.ExpiredReason))
	g.Expect(time.Now()).To(BeTemporally(">", deadline))
	g.Expect(time.Since(deadline)).To(BeNumerically("<", 4*time.Second), "requeued at the end of the grace")
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(ContainSubstring(
		"the renewal grace of 2s ended at " + deadline.UTC().Format(time.RFC3339) + "; the workload must enroll again with a join token"))
	g.Eventually(func() []corev1.Event { return eventsOf(g, ns, wl.Name, enrollv1.ExpiredReason) },
		10*time.Second, 100*time.Millisecond).Should(HaveLen(1))
	g.Expect(eventsOf(g, ns, wl.Name, enrollv1.ExpiredReason)[0].Type).To(Equal(corev1.EventTypeWarning))
	g.Expect(workloadExists(g, wl)()).To(BeTrue(), "an expired workload is kept")
}

func TestExpiredWorkloadRecoversWhenThePolicyGraceGrows(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, "batch")
	wl := newWorkload(t, ns, "batch")
	enrollWorkload(t, wl, time.Now().Add(-2*time.Hour))
	workloadWith(g, wl, 10*time.Second, readyReason("False", enrollv1.ExpiredReason))

	before := p.DeepCopy()
	p.Spec.RenewalGrace = duration(3 * time.Hour)
	g.Expect(env.Client.Patch(ctx, p, client.MergeFrom(before))).To(Succeed())
	got := workloadWith(g, wl, 10*time.Second, readyReason("True", enrollv1.EnrolledReason))
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(HavePrefix("certificate " + got.Status.Serial + " valid until "))
}

func TestWorkloadWhosePolicyIsGoneIsKept(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	wl := newEnrolledWorkload(t, ns, "gone")
	got := workloadWith(g, wl, 10*time.Second, readyReason("False", enrollv1.PolicyNotFoundReason))
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(Equal(
		"EnrollmentPolicy gone not found; the workload renews nothing until it exists again"))
	g.Consistently(workloadExists(g, wl), testPendingTimeout+time.Second, 200*time.Millisecond).Should(BeTrue(),
		"never deleted by the controller")

	newPolicy(t, ns, "gone")
	workloadWith(g, wl, 10*time.Second, readyReason("True", enrollv1.EnrolledReason))
}
