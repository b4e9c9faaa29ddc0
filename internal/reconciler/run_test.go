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

package reconciler

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// recorded is one event a fakeRecorder saw.
type recorded struct{ eventType, reason, message string }

type fakeRecorder struct{ events []recorded }

func (f *fakeRecorder) Eventf(_ runtime.Object, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	f.events = append(f.events, recorded{eventType, reason, fmt.Sprintf(note, args...)})
}

func (f *fakeRecorder) AnnotatedEventf(obj runtime.Object, related runtime.Object, _ map[string]string, eventType, reason, action, note string, args ...any) {
	f.Eventf(obj, related, eventType, reason, action, note, args...)
}

func TestPolicyOf(t *testing.T) {
	g := NewWithT(t)
	g.Expect(PolicyOf(NewStalling("R", "x"))).To(Equal(Config{Event: corev1.EventTypeWarning, Log: true}))
	g.Expect(PolicyOf(NewWaiting("R", "x"))).To(Equal(Config{Event: corev1.EventTypeNormal}))
	g.Expect(PolicyOf(NewWaiting("R", "x").Warn())).To(Equal(Config{Event: corev1.EventTypeWarning}))
	g.Expect(PolicyOf(fmt.Errorf("wrapped: %w", NewGeneric("R", errors.New("x"))))).To(Equal(Config{Event: corev1.EventTypeWarning}))
	g.Expect(PolicyOf(errors.New("x"))).To(Equal(Config{Event: corev1.EventTypeWarning}))
	g.Expect(PolicyOf(&Stalling{Reason: "R", Err: errors.New("x"), Config: Config{Event: EventTypeNone}}).Event).To(Equal(EventTypeNone))
}

func TestEventsFailRecordsATransitionOnce(t *testing.T) {
	g := NewWithT(t)
	rec := &fakeRecorder{}
	ev := Events{Recorder: rec, Action: "Test"}
	obj := &trustv1.TrustAnchor{}
	for range 2 {
		_ = ev.Fail(obj, failedCondition, NewWaiting("Missing", "waiting for it"), nil)
	}
	_ = ev.Fail(obj, failedCondition, NewStalling("Refused", "refused"), nil)
	g.Expect(rec.events).To(Equal([]recorded{
		{corev1.EventTypeNormal, "Missing", "waiting for it"},
		{corev1.EventTypeWarning, "Refused", "refused"},
	}))
	g.Expect(conditions.GetReason(obj, failedCondition)).To(Equal("Refused"))
}

// ruleOnce runs one reconcile of a rule kind (no interval of its own) whose
// chain returns err, and returns the stored object and the result.
func ruleOnce(t *testing.T, c client.Client, s Summary, err error) (*trustv1.TrustSource, ctrl.Result) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	obj := &trustv1.TrustSource{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "rule"}, obj)).To(Succeed())
	res, _ := Finish(ctx, NewPatcher(obj, c), obj, s, ctrl.Result{}, err)
	got := &trustv1.TrustSource{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got, res
}

func TestFinishOfARule(t *testing.T) {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(trustv1.AddToScheme(scheme)).To(Succeed())
	newClient := func() client.Client {
		obj := &trustv1.TrustSource{ObjectMeta: metav1.ObjectMeta{Name: "rule", Generation: 2}}
		return fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(obj).Build()
	}
	rule := func(notReady string) Summary {
		return Summary{FieldOwner: "credo-test", Interval: time.Minute, NoProgress: true,
			Message:  func(Object) string { return "counted" },
			NotReady: func(Object) (string, string) { return notReady, "switched off" }}
	}

	t.Run("a success is Ready with its message and requeues at the interval", func(t *testing.T) {
		g := NewWithT(t)
		got, res := ruleOnce(t, newClient(), rule(""), nil)
		g.Expect(res.RequeueAfter).To(Equal(time.Minute))
		g.Expect(conditions.IsReady(got)).To(BeTrue())
		g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(Equal("counted"))
		g.Expect(got.Status.ObservedGeneration).To(Equal(int64(2)))
	})

	t.Run("a NotReady state is Ready False, reconciled and neither Stalled nor Reconciling", func(t *testing.T) {
		g := NewWithT(t)
		got, res := ruleOnce(t, newClient(), rule(meta.SuspendedReason), nil)
		g.Expect(res.RequeueAfter).To(Equal(time.Minute))
		g.Expect(conditions.IsFalse(got, meta.ReadyCondition)).To(BeTrue())
		g.Expect(conditions.GetReason(got, meta.ReadyCondition)).To(Equal(meta.SuspendedReason))
		g.Expect(conditions.Has(got, meta.StalledCondition)).To(BeFalse())
		g.Expect(conditions.Has(got, meta.ReconcilingCondition)).To(BeFalse())
		g.Expect(got.Status.ObservedGeneration).To(Equal(int64(2)))
	})

	t.Run("a Stalling error stalls with no requeue", func(t *testing.T) {
		g := NewWithT(t)
		got, res := ruleOnce(t, newClient(), rule(meta.SuspendedReason), NewStalling("InvalidSelector", "bad"))
		g.Expect(res).To(Equal(ctrl.Result{}))
		g.Expect(conditions.GetReason(got, meta.StalledCondition)).To(Equal("InvalidSelector"))
		g.Expect(conditions.GetReason(got, meta.ReadyCondition)).To(Equal("InvalidSelector"))
		g.Expect(got.Status.ObservedGeneration).To(Equal(int64(2)))
	})
}

func TestFinishNotifiesAChangeOfReady(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(trustv1.AddToScheme(scheme)).To(Succeed())
	obj := &trustv1.TrustSource{ObjectMeta: metav1.ObjectMeta{Name: "rule", Generation: 1}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(obj).Build()
	rec := &fakeRecorder{}
	notReady := ""
	s := Summary{FieldOwner: "credo-test", ReadyMessage: "fine", Notify: &Events{Recorder: rec, Action: "Test"},
		NotReady: func(Object) (string, string) { return notReady, "switched off" }}

	ruleOnce(t, c, s, nil)
	g.Expect(rec.events).To(BeEmpty(), "a first Ready is no event")
	ruleOnce(t, c, s, NewStalling("Invalid", "bad"))
	notReady = "Revoked"
	ruleOnce(t, c, s, nil)
	ruleOnce(t, c, s, nil)
	notReady = ""
	ruleOnce(t, c, s, nil)
	g.Expect(rec.events).To(Equal([]recorded{
		{corev1.EventTypeWarning, "Invalid", "bad"},
		{corev1.EventTypeNormal, "Revoked", "switched off"},
		{corev1.EventTypeNormal, meta.SucceededReason, "fine"},
	}))
}

func TestFinishState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(enrollv1.AddToScheme(scheme)).To(Succeed())
	wl := &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}
	MarkState(wl, metav1.ConditionTrue, "Enrolled", "enrolled")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	rec := &fakeRecorder{}
	s := Summary{FieldOwner: "credo-test", Notify: &Events{Recorder: rec, Action: "Test"}}
	once := func(err error) (ctrl.Result, error) {
		obj := &enrollv1.Workload{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(wl), obj)).To(Succeed())
		return FinishState(ctx, c, obj.DeepCopy(), obj, s, ctrl.Result{RequeueAfter: time.Hour}, err)
	}

	res, err := once(NewStalling("Expired", "expired"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{}))
	res, err = once(NewStalling("Expired", "expired"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(ctrl.Result{}))
	g.Expect(rec.events).To(Equal([]recorded{{corev1.EventTypeWarning, "Expired", "expired"}}), "an unchanged state is no event")
	got := &enrollv1.Workload{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(wl), got)).To(Succeed())
	g.Expect(conditions.IsFalse(got, meta.ReadyCondition)).To(BeTrue())
	g.Expect(conditions.Has(got, meta.StalledCondition)).To(BeFalse())

	_, err = once(errors.New("boom"))
	g.Expect(err).To(MatchError("boom"))

	// A write that the other writer made since the read is never overwritten.
	stale := &enrollv1.Workload{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(wl), stale)).To(Succeed())
	fresh := stale.DeepCopy()
	MarkState(fresh, metav1.ConditionTrue, "Renewed", "renewed")
	g.Expect(c.Status().Update(ctx, fresh)).To(Succeed())
	before := stale.DeepCopy()
	MarkState(stale, metav1.ConditionTrue, "Enrolled", "back")
	res, err = FinishState(ctx, c, before, stale, s, ctrl.Result{RequeueAfter: time.Hour}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(StateConflictRetry))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(wl), got)).To(Succeed())
	g.Expect(conditions.GetReason(got, meta.ReadyCondition)).To(Equal("Renewed"))
}
