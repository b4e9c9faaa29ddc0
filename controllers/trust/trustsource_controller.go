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
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/predicates"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/shard"
)

// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustsources/status,verbs=get;patch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=helmcharts;ocirepositories,verbs=get;list;watch

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
	// EventRecorder records an event on each change of a rule's Ready: a
	// Warning when it stalls, Normal when it is not Ready for another
	// reason and when it recovers.
	EventRecorder events.Recorder
	// SourceNamespaces are the platform's source namespaces, where a
	// chartRef without a namespace looks for its source
	// (--platform-source-namespaces).
	SourceNamespaces []string
	fluxcontroller.Metrics
}

// trustSourceRecount is how often a rule's count is made again.
const trustSourceRecount = 10 * time.Minute

// trustSourceSummary derives the Ready of ts: True with its count; False
// while it is suspended (it still counts) or while it matches no release
// (NoReleasesMatched); Stalled on a selector it cannot parse
// (InvalidSelector) or a secretName that names no Secret for any release
// (InvalidSecretName). What it cannot do for some releases (an unresolved
// chart, no Secret name for a long release name) is up to those releases'
// authors: told to them, and counted in ReleasesNotApplied, never in
// Ready. A rule has no Reconciling condition. A change of Ready is an
// event through notify (a recovery is a Normal event).
func trustSourceSummary(ts *trustv1.TrustSource, sourceNamespaces []string, notify *reconciler.Events) reconciler.Summary {
	return reconciler.Summary{
		FieldOwner:    TrustAnchorFieldOwner,
		Notify:        notify,
		Interval:      trustSourceRecount,
		NoProgress:    true,
		Informational: []string{trustv1.ReleasesNotAppliedCondition},
		Message: func(reconciler.Object) string {
			return fmt.Sprintf("rule matches %d release(s)", ts.Status.MatchedReleases) + notAppliedNote(ts)
		},
		NotReady: func(reconciler.Object) (string, string) {
			switch {
			case ts.Spec.Suspend:
				return meta.SuspendedReason, fmt.Sprintf("rule is suspended; it matches %d release(s)", ts.Status.MatchedReleases)
			case ts.Status.MatchedReleases == 0:
				return trustv1.NoReleasesMatchedReason, "rule matches no release: " + release.NoMatchHint(ruleOf(ts, sourceNamespaces)) + notAppliedNote(ts)
			}
			return "", ""
		},
	}
}

// notAppliedNote is the part of Ready's message that says some releases
// are in ReleasesNotApplied, or "".
func notAppliedNote(obj conditions.Getter) string {
	if !conditions.IsTrue(obj, trustv1.ReleasesNotAppliedCondition) {
		return ""
	}
	return "; some releases are not applied in full (" + trustv1.ReleasesNotAppliedCondition + ")"
}

// Reconcile counts the HelmReleases a TrustSource selects.
func (r *TrustSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ts := &trustv1.TrustSource{}
	return reconciler.Run(ctx, req, ts, reconciler.Steps[*trustv1.TrustSource]{
		Client:  r.Client,
		Metrics: r.Metrics,
		Summary: trustSourceSummary(ts, r.SourceNamespaces, &reconciler.Events{Recorder: r.EventRecorder, Action: eventActionProject}),
		Reconcile: func(ctx context.Context, ts *trustv1.TrustSource) (ctrl.Result, error) {
			return ctrl.Result{}, r.count(ctx, ts)
		},
	})
}

// count sets status.matchedReleases and ReleasesNotApplied; a selector it
// cannot parse, or a secretName that names no Secret for any release,
// stalls the rule.
func (r *TrustSourceReconciler) count(ctx context.Context, ts *trustv1.TrustSource) error {
	if err := ruleOf(ts, nil).Validate(); err != nil {
		ts.Status.MatchedReleases = 0
		conditions.Delete(ts, trustv1.ReleasesNotAppliedCondition)
		return reconciler.NewStalling(trustv1.InvalidSelectorReason, "%s", err.Error())
	}
	if msg := secretNameTemplateError(ts); msg != "" {
		ts.Status.MatchedReleases = 0
		conditions.Delete(ts, trustv1.ReleasesNotAppliedCondition)
		return reconciler.NewStalling(trustv1.InvalidSecretNameReason, "%s", msg)
	}
	hrs, unresolved, err := selectedReleases(ctx, r.Client, ts, r.SourceNamespaces)
	if err != nil {
		return err
	}
	ts.Status.MatchedReleases = int32(len(hrs))
	na := release.NotApplied{}
	for _, u := range unresolved {
		na.Add(trustv1.ChartUnresolvedReason, u.Release)
	}
	for _, hr := range hrs {
		if _, ok := sourceNameFor(ts, hr.Name); !ok {
			na.Add(trustv1.InvalidSecretNameReason, client.ObjectKeyFromObject(hr))
		}
	}
	if reason, msg := na.Condition(trustv1.InvalidSecretNameReason, trustv1.ChartUnresolvedReason); reason != "" {
		conditions.MarkTrue(ts, trustv1.ReleasesNotAppliedCondition, reason, "%s", msg)
	} else {
		conditions.Delete(ts, trustv1.ReleasesNotAppliedCondition)
	}
	return nil
}

// selectedReleases returns the HelmReleases the valid rule ts selects,
// reading each namespace's labels once, from the cache, and only when ts
// has a namespace selector. A release whose namespace is gone is skipped;
// one whose chart cannot be resolved is returned in unresolved.
func selectedReleases(ctx context.Context, c client.Reader, ts *trustv1.TrustSource, sourceNamespaces []string) (selected []*helmv2.HelmRelease, unresolved []*release.UnresolvedError, err error) {
	var hrs helmv2.HelmReleaseList
	if err := c.List(ctx, &hrs); err != nil {
		return nil, nil, fmt.Errorf("listing HelmReleases: %w", err)
	}
	rule := ruleOf(ts, sourceNamespaces)
	nsLabels := map[string]labels.Set{}
	for i := range hrs.Items {
		hr := &hrs.Items[i]
		if _, seen := nsLabels[hr.Namespace]; !seen && ts.Spec.NamespaceSelector != nil {
			l, err := readNamespaceLabels(ctx, c, hr.Namespace)
			if apierrors.IsNotFound(err) {
				// Its namespace is gone, and the release with it.
				continue
			}
			if err != nil {
				return selected, unresolved, err
			}
			nsLabels[hr.Namespace] = l
		}
		ok, err := rule.Selects(ctx, c, hr, nsLabels[hr.Namespace])
		var u *release.UnresolvedError
		switch {
		case errors.As(err, &u):
			unresolved = append(unresolved, u)
		case err == nil && ok:
			selected = append(selected, hr)
		}
	}
	return selected, unresolved, nil
}

// SetupWithManager registers the reconciler: every rule is recounted when a
// HelmRelease appears, goes, or changes its labels or chart, and when a
// chart source (HelmChart, OCIRepository) appears, goes or changes.
func (r *TrustSourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&trustv1.TrustSource{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&helmv2.HelmRelease{}, handler.EnqueueRequestsFromMapFunc(r.allTrustSources),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})))
	return release.WatchChartSources(b, r.Client, func(ctx context.Context, _ []client.ObjectKey) []reconcile.Request {
		return r.allTrustSources(ctx, nil)
	}).Named("trustsource").
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
