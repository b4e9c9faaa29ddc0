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

package trust

import (
	"context"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/patch"
	"github.com/fluxcd/pkg/runtime/predicates"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/shard"
)

// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustsources/status,verbs=get;patch

// TrustSourceReconciler reports how many releases each TrustSource matches
// and whether its selectors are valid. The TrustAnchorReconciler applies the
// rules; this one only keeps their status.
type TrustSourceReconciler struct {
	client.Client
	// Shard is the part of the objects served (--watch-label-selector).
	// Every shard applies every rule to its releases, but only the shard
	// whose selector matches the TrustSource's own labels keeps its status,
	// and counts the releases of that shard. The zero Shard keeps all.
	Shard shard.Shard
	fluxcontroller.Metrics
}

// Reconcile counts the HelmReleases a TrustSource selects.
func (r *TrustSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ts trustv1.TrustSource
	timer := reconciler.StartTimer(r.Metrics, req)
	defer func() { timer.Done(ctx, &ts) }()
	if err := r.Get(ctx, req.NamespacedName, &ts); err != nil {
		timer.Gone = apierrors.IsNotFound(err)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(&ts, r.Client)
	var hrs helmv2.HelmReleaseList
	if err := r.List(ctx, &hrs); err != nil {
		return ctrl.Result{}, err
	}
	var matched int32
	selErr := ruleOf(&ts).Validate()
	nsLabels := map[string]labels.Set{}
	for i := range hrs.Items {
		if selErr != nil {
			break
		}
		hr := &hrs.Items[i]
		if _, ok := nsLabels[hr.Namespace]; !ok && ts.Spec.NamespaceSelector != nil {
			var ns metav1.PartialObjectMetadata
			ns.APIVersion, ns.Kind = "v1", "Namespace"
			if err := r.Get(ctx, client.ObjectKey{Name: hr.Namespace}, &ns); err != nil {
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
			nsLabels[hr.Namespace] = ns.Labels
		}
		ok, err := TrustSourceSelects(&ts, hr, nsLabels[hr.Namespace])
		if err != nil {
			selErr = err
			break
		}
		if ok {
			matched++
		}
	}
	ts.Status.MatchedReleases = matched
	switch {
	case selErr != nil:
		conditions.MarkStalled(&ts, trustv1.InvalidSelectorReason, "%s", selErr.Error())
		conditions.MarkFalse(&ts, meta.ReadyCondition, trustv1.InvalidSelectorReason, "%s", selErr.Error())
	case ts.Spec.Suspend:
		conditions.Delete(&ts, meta.StalledCondition)
		conditions.MarkFalse(&ts, meta.ReadyCondition, meta.SuspendedReason, "rule is suspended; it matches %d release(s)", matched)
	default:
		conditions.Delete(&ts, meta.StalledCondition)
		conditions.MarkTrue(&ts, meta.ReadyCondition, meta.SucceededReason, "rule matches %d release(s)", matched)
	}
	err := reconciler.PatchRuleStatus(ctx, patcher, &ts, TrustAnchorFieldOwner)
	return ctrl.Result{RequeueAfter: 10 * time.Minute}, err
}

// SetupWithManager registers the reconciler: every rule is recounted when a
// HelmRelease appears, goes, or changes its labels or chart.
func (r *TrustSourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&trustv1.TrustSource{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&helmv2.HelmRelease{}, handler.EnqueueRequestsFromMapFunc(r.allTrustSources),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Named("trustsource").
		Complete(r.Shard.Gate(r, r.Shard.ServesOwnLabels(r.Client, &trustv1.TrustSource{})))
}

func (r *TrustSourceReconciler) allTrustSources(ctx context.Context, _ client.Object) []reconcile.Request {
	var list trustv1.TrustSourceList
	if err := r.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing TrustSources")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ts := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ts)})
	}
	return reqs
}
