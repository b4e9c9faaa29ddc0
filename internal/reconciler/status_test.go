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
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

func TestUpdateStatus(t *testing.T) {
	ctx := context.Background()
	// stale is the object as read, then written by another writer.
	setup := func(g Gomega) (client.Client, *trustv1.TrustAnchor) {
		c, _ := newFinishClient(t, nil)
		stale := &trustv1.TrustAnchor{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "ta"}, stale)).To(Succeed())
		other := stale.DeepCopy()
		other.Status.ObservedGeneration = 7
		g.Expect(c.Status().Update(ctx, other)).To(Succeed())
		return c, stale
	}
	mark := func(calls *int) func(*trustv1.TrustAnchor) (bool, error) {
		return func(ta *trustv1.TrustAnchor) (bool, error) {
			*calls++
			ta.Status.Conditions = append(ta.Status.Conditions, metav1.Condition{Type: failedCondition, Status: metav1.ConditionTrue,
				Reason: "Test", LastTransitionTime: metav1.Now()})
			return true, nil
		}
	}

	t.Run("a conflict reads the object again and applies the change to it", func(t *testing.T) {
		g := NewWithT(t)
		c, stale := setup(g)
		calls := 0
		g.Expect(UpdateStatus(ctx, c, c, wait.Backoff{Steps: 2}, stale, mark(&calls))).To(Succeed())
		g.Expect(calls).To(Equal(2))
		got := getAnchor(g, c, stale)
		g.Expect(got.Status.ObservedGeneration).To(Equal(int64(7)), "the other writer's change is kept")
		g.Expect(got.Status.Conditions).To(HaveLen(1))
	})

	t.Run("the last conflict is returned once the steps are spent", func(t *testing.T) {
		g := NewWithT(t)
		c, stale := setup(g)
		calls := 0
		err := UpdateStatus(ctx, c, c, wait.Backoff{Steps: 1}, stale, mark(&calls))
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "error %v", err)
		g.Expect(calls).To(Equal(1))
	})

	t.Run("a change that returns false writes nothing", func(t *testing.T) {
		g := NewWithT(t)
		c, stale := setup(g)
		g.Expect(UpdateStatus(ctx, c, c, wait.Backoff{Steps: 2}, stale, func(*trustv1.TrustAnchor) (bool, error) { return false, nil })).To(Succeed())
		g.Expect(getAnchor(g, c, stale).Status.Conditions).To(BeEmpty())
	})
}

func getAnchor(g Gomega, c client.Client, obj *trustv1.TrustAnchor) *trustv1.TrustAnchor {
	got := &trustv1.TrustAnchor{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(obj), got)).To(Succeed())
	return got
}
