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
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

const failedCondition = "ProjectionFailed"

var testSummary = Summary{
	FieldOwner:       "credo-test",
	ReadyMessage:     "done",
	NegativePolarity: []string{failedCondition},
}

// finishOnce runs one reconcile of the stored object, step then Finish, and
// returns the object as stored afterwards.
func finishOnce(t *testing.T, c client.Client, step func(obj Object) error) *trustv1.TrustAnchor {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	obj := &trustv1.TrustAnchor{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "ta"}, obj)).To(Succeed())
	patcher := NewPatcher(obj, c)
	stepErr := step(obj)
	_, err := Finish(ctx, patcher, obj, testSummary, ctrl.Result{}, stepErr)
	if stepErr == nil {
		g.Expect(err).NotTo(HaveOccurred())
	}
	got := &trustv1.TrustAnchor{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
}

func newFinishClient(t *testing.T, ready *metav1.Condition) (client.Client, *int) {
	t.Helper()
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(trustv1.AddToScheme(scheme)).To(Succeed())
	obj := &trustv1.TrustAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ta", Generation: 1}}
	obj.Status.ObservedGeneration = 1
	if ready != nil {
		ready.ObservedGeneration = 1
		obj.Status.Conditions = []metav1.Condition{*ready}
	}
	patches := new(int)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(obj).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
				*patches++
				return c.Patch(ctx, o, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				*patches++
				return c.SubResource(sub).Patch(ctx, o, p, opts...)
			},
		}).Build()
	return c, patches
}

func TestFinish(t *testing.T) {
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).UTC().Truncate(time.Second))
	succeed := func(Object) error { return nil }

	t.Run("a re-check with nothing to change sends no patch", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: meta.SucceededReason, Message: "done", LastTransitionTime: hourAgo})
		got := finishOnce(t, c, succeed)
		g.Expect(*patches).To(Equal(0))
		g.Expect(conditions.Get(got, meta.ReadyCondition).LastTransitionTime.Time).To(BeTemporally("==", hourAgo.Time))
	})

	t.Run("a recovery is written with a new transition time", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse,
			Reason: "ProjectionFailed", Message: "boom", LastTransitionTime: hourAgo})
		got := finishOnce(t, c, succeed)
		g.Expect(*patches).To(BeNumerically(">", 0))
		ready := conditions.Get(got, meta.ReadyCondition)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(ready.LastTransitionTime.Time).To(BeTemporally(">", hourAgo.Time))
	})

	t.Run("a new failure is written and keeps no stale Ready", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: meta.SucceededReason, Message: "done", LastTransitionTime: hourAgo})
		got := finishOnce(t, c, func(obj Object) error {
			conditions.MarkTrue(obj, failedCondition, "Failed", "boom")
			return errors.New("boom")
		})
		g.Expect(*patches).To(BeNumerically(">", 0))
		g.Expect(conditions.IsFalse(got, meta.ReadyCondition)).To(BeTrue())
		g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(Equal("boom"))
	})

	t.Run("a handled reconcile request is recorded", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: meta.SucceededReason, Message: "done", LastTransitionTime: hourAgo})
		obj := &trustv1.TrustAnchor{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "ta"}, obj)).To(Succeed())
		obj.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "now"}
		g.Expect(c.Update(context.Background(), obj)).To(Succeed())
		*patches = 0
		got := finishOnce(t, c, succeed)
		g.Expect(*patches).To(Equal(1))
		g.Expect(got.Status.LastHandledReconcileAt).To(Equal("now"))
		g.Expect(conditions.Get(got, meta.ReadyCondition).LastTransitionTime.Time).To(BeTemporally("==", hourAgo.Time))
	})

	t.Run("a first Ready and the rest of the status are written in one patch", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, nil)
		got := finishOnce(t, c, func(obj Object) error {
			obj.(*trustv1.TrustAnchor).Status.ProjectedSecret = "rel.tenant-ca"
			return nil
		})
		g.Expect(*patches).To(Equal(1))
		g.Expect(conditions.IsReady(got)).To(BeTrue())
		g.Expect(got.Status.ProjectedSecret).To(Equal("rel.tenant-ca"))
		g.Expect(got.Status.ObservedGeneration).To(Equal(int64(1)))
	})

	t.Run("a failure's conditions and the rest of the status are written in one patch", func(t *testing.T) {
		g := NewWithT(t)
		c, patches := newFinishClient(t, &metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
			Reason: meta.SucceededReason, Message: "done", LastTransitionTime: hourAgo})
		got := finishOnce(t, c, func(obj Object) error {
			obj.(*trustv1.TrustAnchor).Status.ProjectedSecret = "rel.tenant-ca"
			conditions.MarkTrue(obj, failedCondition, "Failed", "boom")
			return NewStalling("Failed", "boom")
		})
		g.Expect(*patches).To(Equal(1))
		g.Expect(conditions.IsStalled(got)).To(BeTrue())
		g.Expect(conditions.IsTrue(got, failedCondition)).To(BeTrue())
		g.Expect(got.Status.ProjectedSecret).To(Equal("rel.tenant-ca"))
	})
}
