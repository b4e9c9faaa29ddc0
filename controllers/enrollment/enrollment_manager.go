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
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/predicates"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/shard"
)

// policyIndex indexes JoinTokens and Workloads by spec.policy.
const policyIndex = ".spec.policy"

// EnrollmentReconcilerOptions configures an enrollment controller.
type EnrollmentReconcilerOptions struct {
	// MaxConcurrentReconciles is the number of workers; 1 when zero.
	MaxConcurrentReconciles int
	// Shard is the part of the policies reconciled (--watch-label-selector):
	// a policy whose labels match, and the Workloads of such a policy (their
	// own labels only when the policy is gone). The cache is not restricted:
	// the enrollment listener reads every policy, token and workload. The
	// zero Shard reconciles all.
	Shard shard.Shard
}

// IndexEnrollmentFields registers the field indexes both enrollment
// controllers list by: JoinTokens and Workloads by spec.policy. Call it
// once per manager, before either SetupWithManager:
//
//	if err := IndexEnrollmentFields(ctx, mgr.GetFieldIndexer()); err != nil { ... }
//	err = (&EnrollmentPolicyReconciler{...}).SetupWithManager(mgr, opts)
//	err = (&WorkloadReconciler{...}).SetupWithManager(mgr, opts)
func IndexEnrollmentFields(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &enrollv1.JoinToken{}, policyIndex, func(o client.Object) []string {
		if t, ok := o.(*enrollv1.JoinToken); ok && t.Spec.Policy != "" {
			return []string{t.Spec.Policy}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing JoinTokens by %s: %w", policyIndex, err)
	}
	if err := indexer.IndexField(ctx, &enrollv1.Workload{}, policyIndex, func(o client.Object) []string {
		if w, ok := o.(*enrollv1.Workload); ok && w.Spec.Policy != "" {
			return []string{w.Spec.Policy}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Workloads by %s: %w", policyIndex, err)
	}
	return nil
}

// SetupWithManager registers the EnrollmentPolicy controller; the indexes
// of IndexEnrollmentFields must be registered and Limits set (the same as
// the enrollment server's). A policy is recounted when
// one of its JoinTokens is created, deleted or revoked (a spec change; the
// use count is status and is ignored) and when one of its Workloads is
// created or deleted: renewals update Workload status often and must not
// requeue the policy. A change of labels reconciles it too: it may have
// moved to this shard.
func (r *EnrollmentPolicyReconciler) SetupWithManager(mgr ctrl.Manager, opts EnrollmentReconcilerOptions) error {
	if err := r.Limits.Validate(); err != nil {
		return fmt.Errorf("the EnrollmentPolicy controller's limits: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&enrollv1.EnrollmentPolicy{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&enrollv1.JoinToken{}, handler.EnqueueRequestsFromMapFunc(policyOf),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&enrollv1.Workload{}, recountAfter(policyRecountDelay)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Named("enrollmentpolicy").
		Complete(opts.Shard.Gate(r, opts.Shard.ServesOwnLabels(r.Client, &enrollv1.EnrollmentPolicy{})))
}

// SetupWithManager registers the Workload controller; the indexes of
// IndexEnrollmentFields must be registered. A Workload is reconciled when
// created, on a spec change or reconcile request, when its certificate
// changes (a new serial or notAfter moves its expiry), and when its policy
// is created, deleted or changed (its renewal grace moves the expiry; its
// labels move it to another shard).
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager, opts EnrollmentReconcilerOptions) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&enrollv1.Workload{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}, certificateChanged))).
		Watches(&enrollv1.EnrollmentPolicy{}, handler.EnqueueRequestsFromMapFunc(r.workloadsOfPolicy),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Named("workload").
		Complete(opts.Shard.Gate(r, servesWorkload(r.Client, opts.Shard)))
}

// policyRecountDelay is how long after a Workload is created or deleted its
// policy is recounted.
const policyRecountDelay = time.Second

// recountAfter enqueues the policy of a Workload created or deleted after
// delay: the workqueue keeps one entry per policy, so a fleet enrolling at
// once costs one recount (and one status write) per policy per delay, not
// one per Workload.
func recountAfter(delay time.Duration) handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range policyOf(context.Background(), o) {
			q.AddAfter(req, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}

// certificateChanged passes updates that change a Workload's current
// certificate: its serial or its notAfter.
var certificateChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*enrollv1.Workload)
		n, ok2 := e.ObjectNew.(*enrollv1.Workload)
		if !ok1 || !ok2 {
			return false
		}
		return o.Status.Serial != n.Status.Serial || !o.Status.NotAfter.Equal(n.Status.NotAfter)
	},
}

// policyOf maps a JoinToken or a Workload to its EnrollmentPolicy.
func policyOf(_ context.Context, o client.Object) []reconcile.Request {
	var name string
	switch v := o.(type) {
	case *enrollv1.JoinToken:
		name = v.Spec.Policy
	case *enrollv1.Workload:
		name = v.Spec.Policy
	}
	if name == "" {
		return nil
	}
	return []reconcile.Request{reconciler.Request(o.GetNamespace(), name)}
}

// workloadsOfPolicy maps an EnrollmentPolicy to its Workloads.
func (r *WorkloadReconciler) workloadsOfPolicy(ctx context.Context, o client.Object) []reconcile.Request {
	var list enrollv1.WorkloadList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{policyIndex: o.GetName()},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Workloads of an EnrollmentPolicy", "policy", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconciler.Request(list.Items[i].Namespace, list.Items[i].Name))
	}
	return reqs
}
