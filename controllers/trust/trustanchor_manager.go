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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/predicates"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/release"
)

// TrustAnchorReconcilerOptions configures the controller.
type TrustAnchorReconcilerOptions struct {
	MaxConcurrentReconciles int
}

// SetupWithManager registers the reconciler. Secrets are watched as metadata
// in the manager's cache, never label-scoped (the name leg's sources carry
// no label, and a label-scoped Secret informer would hide them from every
// other watch of Secrets in the manager), and the label leg's sources
// through their own cache (r.Sources), whose events alone reconcile a
// labelled Secret: a reconcile is then never started by an event its
// cache has not seen yet.
func (r *TrustAnchorReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts TrustAnchorReconcilerOptions) error {
	if err := indexTrustAnchors(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&trustv1.TrustAnchor{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}),
		)).
		Watches(&helmv2.HelmRelease{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}),
		)).
		WatchesMetadata(&corev1.Secret{}, r.secretEvents(r.labelled)).
		Watches(&trustv1.TrustSource{}, handler.EnqueueRequestsFromMapFunc(r.requestsForTrustSource))
	b = r.watchSentinels(b, mgr)
	if r.Sources != nil {
		b = b.WatchesRawSource(source.Kind[client.Object](r.Sources, &corev1.Secret{}, r.secretEvents(nil)))
	}
	return release.WatchChartSources(b, r.Client, requestsForReleases).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Named("trustanchor").
		// The shard is judged in Reconcile, which reads the release anyway.
		Complete(r)
}

// requestsForReleases reconciles the releases whose chartRef names a
// chart source that changed: their chart name may have.
func requestsForReleases(_ context.Context, releases []client.ObjectKey) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(releases))
	for _, k := range releases {
		reqs = append(reqs, reconcile.Request{NamespacedName: k})
	}
	return reqs
}

// requestsForTrustSource maps a rule to the releases it selects and the
// TrustAnchors it created.
func (r *TrustAnchorReconciler) requestsForTrustSource(ctx context.Context, o client.Object) []reconcile.Request {
	log := ctrl.LoggerFrom(ctx)
	ts, ok := o.(*trustv1.TrustSource)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	var tas trustv1.TrustAnchorList
	if err := r.List(ctx, &tas, client.MatchingFields{discoveredByIndex: trustSourcePrefix + ts.Name}); err != nil {
		log.Error(err, "listing TrustAnchors by TrustSource", "trustsource", ts.Name)
	}
	for _, ta := range tas.Items {
		reqs = append(reqs, reconciler.Request(ta.Namespace, ta.Name))
	}
	if ruleOf(ts, nil).Validate() != nil {
		// The rule selects nothing; its own reconcile reports why.
		return reqs
	}
	hrs, unresolved, err := selectedReleases(ctx, r.Client, ts, r.SourceNamespaces)
	if err != nil {
		log.Error(err, "listing the releases a TrustSource selects", "trustsource", ts.Name)
	}
	for _, hr := range hrs {
		reqs = append(reqs, reconciler.Request(hr.Namespace, hr.Name))
	}
	for _, u := range unresolved {
		reqs = append(reqs, reconcile.Request{NamespacedName: u.Release})
	}
	return reqs
}
