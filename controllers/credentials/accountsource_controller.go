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

package credentials

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/release"
)

// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources/status,verbs=get;patch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=helmcharts;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=create;delete

// accountSourceRecount is how often a source's accounts are derived again.
const accountSourceRecount = 10 * time.Minute

// Reconcile brings the generated accounts of one AccountSource in line.
// What it cannot do for a release (its chart source, its values, its
// names, a limit) is told to that release and counted in
// ReleasesNotApplied: it never makes the source not Ready, and the
// source's status names no release.
func (r *AccountSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	src := &credv1.AccountSource{}
	return reconciler.Run(ctx, req, src, reconciler.Steps[*credv1.AccountSource]{
		Client:  r.Client,
		Metrics: r.Metrics,
		Summary: reconciler.Summary{
			FieldOwner:    CredentialFieldOwner,
			Interval:      accountSourceRecount,
			NoProgress:    true,
			Informational: []string{credv1.ReleasesNotAppliedCondition},
			Message: func(reconciler.Object) string {
				return fmt.Sprintf("%d account(s) for %d release(s)", src.Status.Accounts, src.Status.MatchedReleases) + notAppliedNote(src)
			},
			NotReady: func(reconciler.Object) (string, string) {
				if src.Status.MatchedReleases == 0 {
					return credv1.NoReleasesMatchedReason, "source matches no release: " + release.NoMatchHint(r.ruleOf(src)) + notAppliedNote(src)
				}
				return "", ""
			},
		},
		// Its notices go with it.
		Missing:   func(context.Context) error { r.forget(req.Name); return nil },
		Suspended: func(src *credv1.AccountSource) bool { return src.Spec.Suspend },
		// Another shard keeps the status; this one derives its releases' accounts.
		KeepsStatus: func(src *credv1.AccountSource) bool { return r.Shard.Serves(src) },
		Reconcile: func(ctx context.Context, src *credv1.AccountSource) (ctrl.Result, error) {
			err := r.sync(ctx, src)
			switch {
			case errors.Is(err, errUnsupportedSource):
				conditions.Delete(src, credv1.ReleasesNotAppliedCondition)
				return ctrl.Result{}, &reconciler.Stalling{Reason: credv1.UnsupportedSourceKindReason, Err: err}
			case errors.Is(err, errInvalidSelector):
				conditions.Delete(src, credv1.ReleasesNotAppliedCondition)
				return ctrl.Result{}, &reconciler.Stalling{Reason: credv1.InvalidSelectorReason, Err: err}
			}
			return ctrl.Result{}, err
		},
	})
}

// SetupWithManager registers the reconciler: sources are re-derived when a
// HelmRelease or a chart source changes and when one of their accounts
// changes or goes.
func (r *AccountSourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		return errors.New("an AccountSourceReconciler needs an APIReader: releases' values are read uncached")
	}
	r.values = &releaseValues{reader: r.APIReader}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&credv1.AccountSource{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&helmv2.HelmRelease{}, handler.EnqueueRequestsFromMapFunc(r.allSources),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&credv1.CredentialAccount{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.GetLabels()[credv1.SourceLabel]; name != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
			}
			return nil
		}), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool { return false },
		}))
	return release.WatchChartSources(b, r.Client, func(ctx context.Context, _ []client.ObjectKey) []reconcile.Request {
		return r.allSources(ctx, nil)
	}).
		Named("accountsource").
		Complete(r)
}

func (r *AccountSourceReconciler) allSources(ctx context.Context, _ client.Object) []reconcile.Request {
	var list credv1.AccountSourceList
	if err := r.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AccountSources")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, s := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}
