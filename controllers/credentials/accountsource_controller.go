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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/predicates"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/credo-dev/credo/internal/shard"
)

// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources/status,verbs=get;patch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=helmcharts;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=create;delete

// AccountSourceReconciler generates the CredentialAccounts an AccountSource
// derives from the releases it selects, and deletes the ones it no longer
// derives. Accounts of a release whose values cannot be read are kept.
type AccountSourceReconciler struct {
	client.Client
	// APIReader reads uncached; required: releases' spec.values, which the
	// cache does not hold (ReleaseCacheTransform), are read with it, and
	// when sharded it tells a release that moved to another shard (whose
	// accounts are handed over) from one that is gone (whose accounts are
	// deleted).
	APIReader client.Reader
	// Shard is the part of the releases served (--watch-label-selector).
	// Every shard derives the accounts of its own releases, labelled with
	// their shard; only the shard whose selector matches the AccountSource's
	// own labels writes its status, counting that shard's releases and
	// accounts. The zero Shard serves all.
	Shard shard.Shard
	// SourceNamespaces are the platform's source namespaces, where a
	// chartRef without a namespace looks for its source
	// (--platform-source-namespaces).
	SourceNamespaces []string
	// Limits bound what one source generates for a release and what the
	// generated accounts of a namespace may come to.
	Limits Limits
	// Notices tells a release what the source could not do for it: a
	// Warning on its HelmRelease, once per change. Nil records none.
	Notices *release.Notices
	fluxcontroller.Metrics

	// values are the keys read of releases' spec.values.
	values *releaseValues
}

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

// conflict reports an account the source may not bring in line with want:
// created for another entry, username, release or owner, or of another
// format (owner and format are immutable). It is left as it is.
func conflict(cur, want *credv1.CredentialAccount) *problem {
	var why string
	switch {
	case cur.Spec.Release != want.Spec.Release || cur.Spec.Username != want.Spec.Username ||
		cur.Labels[entryLabel] != want.Labels[entryLabel] || cur.Labels[credv1.SourceLabel] != want.Labels[credv1.SourceLabel]:
		why = fmt.Sprintf("it was not created for username %s of sources[%s]", quoteKey(want.Spec.Username), want.Labels[entryLabel])
	case cur.GetOwner() != want.GetOwner():
		why = fmt.Sprintf("its owner is %s, the source's is %s, and the owner of an account never changes", cur.GetOwner(), want.GetOwner())
	case !equality.Semantic.DeepEqual(cur.Spec.Format, want.Spec.Format):
		why = fmt.Sprintf("its format is %s, the source's is %s, and the format of an account never changes", cur.Spec.Format.Name, want.Spec.Format.Name)
	default:
		return nil
	}
	return &problem{credv1.AccountConflictReason, releaseOf(want), fmt.Sprintf(
		"CredentialAccount %s is left as it is: %s; delete it to have the source create its own", cur.Name, why)}
}

// update brings the mutable part of a generated account (Secret labels,
// valuesFrom) in line with the source.
func (r *AccountSourceReconciler) update(ctx context.Context, cur, want *credv1.CredentialAccount) error {
	if equality.Semantic.DeepEqual(cur.Spec.SecretLabels, want.Spec.SecretLabels) &&
		equality.Semantic.DeepEqual(cur.Spec.ValuesFrom, want.Spec.ValuesFrom) {
		return nil
	}
	before := cur.DeepCopy()
	cur.Spec.SecretLabels, cur.Spec.ValuesFrom = want.Spec.SecretLabels, want.Spec.ValuesFrom
	if err := r.Patch(ctx, cur, client.MergeFrom(before), client.FieldOwner(CredentialFieldOwner)); err != nil {
		return fmt.Errorf("updating account %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return nil
}

// create creates a derived account. An account of its name that the source
// did not create for the same entry is a conflict and is never adopted; a
// refusal of the API server (an invalid username) is a problem of its
// release alone.
func (r *AccountSourceReconciler) create(ctx context.Context, src *credv1.AccountSource, a *credv1.CredentialAccount) (*problem, error) {
	err := r.Create(ctx, a, client.FieldOwner(CredentialFieldOwner))
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsAlreadyExists(err):
		var cur credv1.CredentialAccount
		if err := r.reader().Get(ctx, client.ObjectKeyFromObject(a), &cur); err != nil {
			return nil, fmt.Errorf("reading account %s/%s: %w", a.Namespace, a.Name, err)
		}
		if p := conflict(&cur, a); p != nil {
			if a.Spec.Owner != credv1.OwnerPlatform || cur.GetOwner() == credv1.OwnerPlatform {
				return p, nil
			}
			if cur.Labels[credv1.SourceLabel] == src.Name && squats(&cur, a) {
				// Derived for a release another shard serves.
				p, err := r.makeWay(ctx, &cur, a)
				if err != nil {
					return nil, err
				}
				return p, nil
			}
			if cur.Labels[credv1.SourceLabel] != src.Name {
				// An account the source did not create holds the name of a
				// platform account: the platform account takes a name of its
				// own, which a tenant cannot know in advance, and keeps it.
				return r.createAs(ctx, a, platformFallbackName(src, a))
			}
			return p, nil
		}
		// Created meanwhile, or held by another shard.
		return nil, r.takeOver(ctx, a)
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		return &problem{credv1.AccountLimitExceededReason, releaseOf(a), fmt.Sprintf("account %s for username %s was refused by a ResourceQuota of the namespace: %v",
			a.Name, quoteKey(a.Spec.Username), err)}, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err):
		return &problem{credv1.UsernameRefusedReason, releaseOf(a), fmt.Sprintf("account %s for username %s was refused: %s",
			a.Name, quoteKey(a.Spec.Username), apierrors.ReasonForError(err))}, nil
	}
	return nil, fmt.Errorf("creating account %s/%s: %w", a.Namespace, a.Name, err)
}

// squats reports a tenant account the source derived for another release
// that holds the name of a platform account want.
func squats(cur, want *credv1.CredentialAccount) bool {
	return want.Spec.Owner == credv1.OwnerPlatform && cur.GetOwner() != credv1.OwnerPlatform && cur.Spec.Release != want.Spec.Release
}

// makeWay deletes a squatting tenant account (platform entries win, its key
// is refused); the platform account is created once it is gone.
func (r *AccountSourceReconciler) makeWay(ctx context.Context, cur, want *credv1.CredentialAccount) (*problem, error) {
	p := &problem{credv1.UsernameRefusedReason, releaseOf(cur), fmt.Sprintf(
		"username %s has the account name %s of a platform account of release %s; its account is deleted",
		quoteKey(cur.Spec.Username), cur.Name, want.Spec.Release)}
	if err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
		return p, fmt.Errorf("deleting account %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return p, nil
}

// createAs creates a under another name. An account already there is the
// one of an earlier attempt if it is the same account (else a conflict),
// taken over from another shard if need be.
func (r *AccountSourceReconciler) createAs(ctx context.Context, a *credv1.CredentialAccount, name string) (*problem, error) {
	b := a.DeepCopy()
	b.Name = name
	err := r.Create(ctx, b, client.FieldOwner(CredentialFieldOwner))
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return nil, fmt.Errorf("creating account %s/%s: %w", b.Namespace, b.Name, err)
		}
		return nil, nil
	}
	var cur credv1.CredentialAccount
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(b), &cur); err != nil {
		return nil, fmt.Errorf("reading account %s/%s: %w", b.Namespace, b.Name, err)
	}
	if p := conflict(&cur, b); p != nil {
		return p, nil
	}
	return nil, r.takeOver(ctx, b)
}

// olderThan orders accounts by creation, then name.
func olderThan(a, b *credv1.CredentialAccount) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// identity is what makes a generated account the same account whatever its
// name: namespace, release, entry and username.
func identity(a *credv1.CredentialAccount) string {
	return a.Namespace + "/" + a.Spec.Release + "/" + a.Labels[entryLabel] + "/" + a.Spec.Username
}

// platformFallbackName is the name of a platform account whose own name is
// held by an account the source did not create: its name with a hash of the
// source's UID, the entry and the username, which tenants (who cannot read
// cluster-scoped AccountSources) cannot compute.
func platformFallbackName(src *credv1.AccountSource, a *credv1.CredentialAccount) string {
	sum := sha256.Sum256([]byte(string(src.UID) + "/" + identity(a)))
	base := a.Name
	if len(base) > 253-9 {
		base = strings.TrimRight(base[:253-9], "-.")
	}
	return base + "-" + hex.EncodeToString(sum[:])[:8]
}

// reader reads uncached when it can: an account just created elsewhere may
// not be in the cache yet.
func (r *AccountSourceReconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
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
