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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Steps is what one kind's Reconcile does beyond what Run does for every
// kind. Only Client, Metrics, Summary and Reconcile are required.
type Steps[T Object] struct {
	// Client reads the object and patches its status.
	Client client.Client
	// Metrics records the duration of the reconcile.
	Metrics fluxcontroller.Metrics
	// Summary derives Ready and patches the status (Finish), or, with
	// Lifecycle, names the field owner and the events of FinishState.
	Summary Summary
	// Lifecycle ends the reconcile through FinishState: the kind's Ready is
	// a lifecycle state another writer (the enrollment server) also writes.
	Lifecycle bool

	// Start, when set, runs first, before the object is read (the shard's
	// namespace selector, reads the chain needs). false ends the reconcile
	// with nothing written.
	Start func(ctx context.Context) (bool, error)
	// Missing, when set, runs when the object is not found (a TrustAnchor
	// is created for a release a source claims).
	Missing func(ctx context.Context) error
	// Finalize, when set, runs for an object being deleted; else such an
	// object is left as it is.
	Finalize func(ctx context.Context, obj T) error
	// Suspended, when set, reports a suspended object: it is left as it is,
	// status and all. A kind that reports its suspension in its status
	// (TrustSource) leaves it unset.
	Suspended func(obj T) bool
	// Prepare, when set, runs before the status patch helper is made (a
	// finalizer to add).
	Prepare func(ctx context.Context, obj T) error
	// Observed, when set, returns status.observedGeneration: an object of a
	// newer generation is marked Reconciling until the reconcile ends.
	Observed func(obj T) int64
	// KeepsStatus, when set, reports whether this controller keeps obj's
	// status; when it does not (a rule whose status another shard keeps),
	// the chain runs and no status is written.
	KeepsStatus func(obj T) bool
	// Reconcile is the chain. Its error is typed (Stalling, Waiting,
	// Generic) or retried; its RequeueAfter, when set, replaces the interval.
	Reconcile func(ctx context.Context, obj T) (ctrl.Result, error)
}

// Run is the Reconcile of every credo reconciler, written once: it times
// the reconcile (the object's series goes with it when it is gone), reads
// the object, finalizes one being deleted, leaves a suspended one alone,
// and runs the chain between the status patch helper and the deferred
// Finish, or FinishState for a lifecycle kind. The shard gate
// (internal/shard.Gate) wraps it.
//
//	func (r *XReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		return reconciler.Run(ctx, req, &v1.X{}, reconciler.Steps[*v1.X]{
//			Client: r.Client, Metrics: r.Metrics, Summary: xSummary, Reconcile: r.reconcileX,
//		})
//	}
func Run[T Object](ctx context.Context, req ctrl.Request, obj T, s Steps[T]) (out ctrl.Result, outErr error) {
	timer := StartTimer(s.Metrics, req)
	defer func() { timer.Done(ctx, obj) }()
	if s.Start != nil {
		if ok, err := s.Start(ctx); err != nil || !ok {
			return ctrl.Result{}, err
		}
	}
	if err := s.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		timer.Gone = true
		if s.Missing != nil {
			return ctrl.Result{}, s.Missing(ctx)
		}
		return ctrl.Result{}, nil
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		if s.Finalize != nil {
			return ctrl.Result{}, s.Finalize(ctx, obj)
		}
		return ctrl.Result{}, nil
	}
	if s.Suspended != nil && s.Suspended(obj) {
		ctrl.LoggerFrom(ctx).V(1).Info("reconciliation is suspended")
		return ctrl.Result{}, nil
	}
	if s.Prepare != nil {
		if err := s.Prepare(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.Lifecycle {
		before, _ := obj.DeepCopyObject().(Object)
		res, err := s.Reconcile(ctx, obj)
		return FinishState(ctx, s.Client, before, obj, s.Summary, res, err)
	}
	if s.KeepsStatus != nil && !s.KeepsStatus(obj) {
		res, err := s.Reconcile(ctx, obj)
		return result(obj, s.Summary.interval(obj), res, err)
	}
	patcher := NewPatcher(obj, s.Client)
	defer func() {
		out, outErr = Finish(ctx, patcher, obj, s.Summary, out, outErr)
	}()
	if s.Observed != nil && obj.GetGeneration() != s.Observed(obj) {
		conditions.MarkReconciling(obj, meta.ProgressingReason, "reconciling generation %d", obj.GetGeneration())
	}
	return s.Reconcile(ctx, obj)
}
