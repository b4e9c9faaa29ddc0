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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/patch"
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
	creconcile "github.com/credo-dev/credo/internal/reconcile"
	"github.com/credo-dev/credo/internal/shard"
)

// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources,verbs=get;list;watch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=accountsources/status,verbs=get;patch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=create;delete

// AccountSourceReconciler generates the CredentialAccounts an AccountSource
// derives from the releases it selects, and deletes the ones it no longer
// derives. Accounts of a release whose values cannot be read are kept.
type AccountSourceReconciler struct {
	client.Client
	// APIReader reads uncached; required when sharded, to tell a release
	// that moved to another shard (whose accounts are handed over) from one
	// that is gone (whose accounts are deleted).
	APIReader client.Reader
	// Shard is the part of the releases served (--watch-label-selector).
	// Every shard derives the accounts of its own releases, labelled with
	// their shard; only the shard whose selector matches the AccountSource's
	// own labels writes its status, counting that shard's releases and
	// accounts. The zero Shard serves all.
	Shard shard.Shard
	fluxcontroller.Metrics
}

// Reconcile brings the generated accounts of one AccountSource in line.
func (r *AccountSourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var src credv1.AccountSource
	timer := startTimer(r.Metrics, req)
	defer func() { timer.done(ctx, &src) }()
	if err := r.Get(ctx, req.NamespacedName, &src); err != nil {
		timer.gone = apierrors.IsNotFound(err)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if src.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	patcher := patch.NewSerialPatcher(&src, r.Client)
	syncErr := r.sync(ctx, &src)
	var invalid *invalidValuesError
	switch {
	case errors.Is(syncErr, errUnsupportedSource):
		conditions.MarkStalled(&src, credv1.UnsupportedSourceKindReason, "%s", syncErr.Error())
		conditions.MarkFalse(&src, meta.ReadyCondition, credv1.UnsupportedSourceKindReason, "%s", syncErr.Error())
		syncErr = nil
	case errors.As(syncErr, &invalid):
		conditions.Delete(&src, meta.StalledCondition)
		conditions.MarkFalse(&src, meta.ReadyCondition, credv1.InvalidValuesReason, "%s; their existing accounts are kept", invalid.Error())
		syncErr = nil
	case syncErr != nil:
		conditions.Delete(&src, meta.StalledCondition)
		conditions.MarkFalse(&src, meta.ReadyCondition, meta.FailedReason, "%s", syncErr.Error())
	default:
		conditions.Delete(&src, meta.StalledCondition)
		conditions.MarkTrue(&src, meta.ReadyCondition, meta.SucceededReason,
			"%d account(s) for %d release(s)", src.Status.Accounts, src.Status.MatchedReleases)
	}
	if !r.Shard.Serves(&src) {
		// Another shard keeps the status; this one derived its releases' accounts.
		return ctrl.Result{RequeueAfter: 10 * time.Minute}, syncErr
	}
	err := creconcile.PatchRuleStatus(ctx, patcher, &src, CredentialFieldOwner)
	return ctrl.Result{RequeueAfter: 10 * time.Minute}, errors.Join(syncErr, err)
}

// invalidValuesError collects the releases whose values could not be read.
type invalidValuesError struct{ err error }

func (e *invalidValuesError) Error() string { return e.err.Error() }

// sync creates, updates and deletes the source's accounts.
func (r *AccountSourceReconciler) sync(ctx context.Context, src *credv1.AccountSource) error {
	var hrs helmv2.HelmReleaseList
	if err := r.List(ctx, &hrs); err != nil {
		return fmt.Errorf("listing HelmReleases: %w", err)
	}
	desired := map[client.ObjectKey]*credv1.CredentialAccount{}
	// keep holds (namespace/release, entry) pairs whose values were unreadable.
	keep := map[string]bool{}
	var matched int32
	var invalidErrs []error
	for i := range hrs.Items {
		hr := &hrs.Items[i]
		ok, err := sourceSelects(src, hr)
		if err != nil {
			return fmt.Errorf("%w: %w", errUnsupportedSource, err)
		}
		if !ok || !hr.DeletionTimestamp.IsZero() {
			continue
		}
		matched++
		accts, invalid, err := desiredAccounts(src, hr)
		if errors.Is(err, errUnsupportedSource) {
			return err
		}
		if err != nil {
			invalidErrs = append(invalidErrs, err)
		}
		for _, e := range invalid {
			keep[hr.Namespace+"/"+hr.Name+"/"+strconv.Itoa(e)] = true
		}
		for _, a := range accts {
			r.Shard.Stamp(a, hr)
			desired[client.ObjectKeyFromObject(a)] = a
		}
	}
	src.Status.MatchedReleases = matched

	var existing credv1.CredentialAccountList
	if err := r.List(ctx, &existing, client.MatchingLabels{credv1.SourceLabel: src.Name}); err != nil {
		return fmt.Errorf("listing generated accounts: %w", err)
	}
	var count int32
	for i := range existing.Items {
		cur := &existing.Items[i]
		want, ok := desired[client.ObjectKeyFromObject(cur)]
		if !ok {
			if keep[cur.Namespace+"/"+cur.Labels[credv1.ReleaseLabel]+"/"+cur.Labels[entryLabel]] {
				count++
				continue
			}
			// Its release may have moved to another shard: the account goes with it.
			if moved, err := r.handOver(ctx, cur); err != nil || moved {
				if err != nil {
					return err
				}
				continue
			}
			if err := r.Delete(ctx, cur); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting account %s/%s: %w", cur.Namespace, cur.Name, err)
			}
			continue
		}
		delete(desired, client.ObjectKeyFromObject(cur))
		count++
		if equality.Semantic.DeepEqual(cur.Spec.Format, want.Spec.Format) && cur.Spec.Owner == want.Spec.Owner &&
			equality.Semantic.DeepEqual(cur.Spec.SecretLabels, want.Spec.SecretLabels) &&
			equality.Semantic.DeepEqual(cur.Spec.ValuesFrom, want.Spec.ValuesFrom) {
			continue
		}
		before := cur.DeepCopy()
		cur.Spec.Format, cur.Spec.Owner, cur.Spec.SecretLabels, cur.Spec.ValuesFrom =
			want.Spec.Format, want.Spec.Owner, want.Spec.SecretLabels, want.Spec.ValuesFrom
		if err := r.Patch(ctx, cur, client.MergeFrom(before), client.FieldOwner(CredentialFieldOwner)); err != nil {
			return fmt.Errorf("updating account %s/%s: %w", cur.Namespace, cur.Name, err)
		}
	}
	for _, a := range desired {
		err := r.Create(ctx, a, client.FieldOwner(CredentialFieldOwner))
		if apierrors.IsAlreadyExists(err) {
			// Created meanwhile, or held by another shard.
			err = r.takeOver(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("creating account %s/%s: %w", a.Namespace, a.Name, err)
		}
		count++
	}
	src.Status.Accounts = count
	if len(invalidErrs) > 0 {
		return &invalidValuesError{err: errors.Join(invalidErrs...)}
	}
	return nil
}

// SetupWithManager registers the reconciler: sources are re-derived when a
// HelmRelease changes and when one of their accounts changes or goes.
func (r *AccountSourceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Shard.Sharded() && r.APIReader == nil {
		return errors.New("a sharded AccountSourceReconciler needs an APIReader")
	}
	return ctrl.NewControllerManagedBy(mgr).
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
		})).
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
