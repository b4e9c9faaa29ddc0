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
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// pendingServer is a server whose cache shows cached and whose API server
// holds stored, with IndexFields' indexes on the cache: the pure counting
// step of checkPending, the API server's part of it stood in for.
func pendingServer(t *testing.T, limit int, cached, stored []client.Object) *Server {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := enrollv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cached...).
		WithIndex(&enrollv1.Workload{}, nameIndex, func(o client.Object) []string { return []string{o.GetName()} }).
		WithIndex(&enrollv1.Workload{}, pendingIndex, func(o client.Object) []string {
			if w := o.(*enrollv1.Workload); isPending(w) {
				return []string{w.Spec.Token}
			}
			return nil
		}).Build()
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored...).Build()
	return &Server{Reader: cache, APIReader: api, Limits: Limits{MaxPendingPerToken: limit}}
}

func pendingWorkload(name, token, serial string) *enrollv1.Workload {
	return &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fleet"},
		Spec: enrollv1.WorkloadSpec{Policy: "vms", Token: token}, Status: enrollv1.WorkloadStatus{Serial: serial}}
}

// A registration reserved and still being created (the API server does
// not have it yet) counts while the count is confirmed at the limit: a
// second registration of the token is refused, not admitted over it.
func TestARegistrationBeingCreatedCountsAtTheLimit(t *testing.T) {
	ctx := context.Background()
	jt := &enrollv1.JoinToken{ObjectMeta: metav1.ObjectMeta{Name: "tok", Namespace: "fleet"}}
	w1 := pendingWorkload("w1", "tok", "")
	s := pendingServer(t, 2, []client.Object{w1.DeepCopy()}, []client.Object{w1.DeepCopy()})
	if e := s.checkPending(ctx, jt, "in-flight"); e != nil {
		t.Fatalf("the second registration was refused: %v", e.msg)
	}
	// in-flight's create has not reached the API server: a third is over
	// the limit of 2.
	e := s.checkPending(ctx, jt, "third")
	if e == nil || e.status != http.StatusTooManyRequests {
		t.Fatalf("a third registration was admitted while the second was being created")
	}
}

// At the limit, a registration the API server shows completed frees its
// place even while the cache shows it pending; one it shows pending but
// the cache does not show at all keeps counting on the next registration.
func TestTheConfirmationCountsWhatTheAPIServerShows(t *testing.T) {
	ctx := context.Background()
	jt := &enrollv1.JoinToken{ObjectMeta: metav1.ObjectMeta{Name: "tok", Namespace: "fleet"}}
	// The cache lags: w1 completed, w2 registered by this replica and
	// not seen yet.
	s := pendingServer(t, 2,
		[]client.Object{pendingWorkload("w1", "tok", "")},
		[]client.Object{pendingWorkload("w1", "tok", "01ab"), pendingWorkload("w2", "tok", "")})
	s.recent.add(types.NamespacedName{Namespace: jt.Namespace, Name: jt.Name}, "w2", s.now())
	if e := s.checkPending(ctx, jt, "w3"); e != nil {
		t.Fatalf("w1 completed on the API server, yet w3 was refused: %v", e.msg)
	}
	// w2 and w3 are pending; the cache still shows neither: a fourth is
	// over the limit.
	if e := s.checkPending(ctx, jt, "w4"); e == nil {
		t.Fatalf("w4 was admitted: w2, confirmed pending, was forgotten before the cache showed it")
	}
}
