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
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/predicates"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// SetupWithManager registers the reconciler. Secrets are watched as
// metadata only; HelmReleases map to their accounts.
func (r *CredentialAccountReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &credv1.CredentialAccount{}, accountSecretIndex, func(o client.Object) []string {
		a, ok := o.(*credv1.CredentialAccount)
		if !ok {
			return nil
		}
		return []string{a.SecretName()}
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", accountSecretIndex, err)
	}
	if err := idx.IndexField(ctx, &credv1.CredentialAccount{}, accountReleaseIndex, func(o client.Object) []string {
		a, ok := o.(*credv1.CredentialAccount)
		if !ok {
			return nil
		}
		return []string{a.Spec.Release}
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", accountReleaseIndex, err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&credv1.CredentialAccount{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&helmv2.HelmRelease{}, handler.EnqueueRequestsFromMapFunc(r.accountsOfRelease), builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.accountsOfSecret)).
		// A platform entry reserving a name, or no longer reserving it.
		Watches(&credv1.AccountSource{}, handler.EnqueueRequestsFromMapFunc(r.accountsInCollision),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	b = r.watchApplied(b, mgr)
	// A chart source's change can change which AccountSources select the
	// releases whose chartRef names it, and so the names they reserve.
	return release.WatchChartSources(b, r.Client, r.accountsOfReleases).
		Named("credentialaccount").
		Complete(r.Shard.Gate(r, r.servesAccount))
}

func (r *CredentialAccountReconciler) accountsOfRelease(ctx context.Context, o client.Object) []reconcile.Request {
	return r.accountsBy(ctx, o.GetNamespace(), accountReleaseIndex, o.GetName())
}

// accountsOfReleases are the accounts of releases.
func (r *CredentialAccountReconciler) accountsOfReleases(ctx context.Context, releases []client.ObjectKey) []reconcile.Request {
	var reqs []reconcile.Request
	for _, k := range releases {
		reqs = append(reqs, r.accountsBy(ctx, k.Namespace, accountReleaseIndex, k.Name)...)
	}
	return reqs
}

func (r *CredentialAccountReconciler) accountsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return r.accountsBy(ctx, o.GetNamespace(), accountSecretIndex, o.GetName())
}

// accountsInCollision are the tenant accounts refused with
// AccountCollision, which an AccountSource's platform entries may reserve.
func (r *CredentialAccountReconciler) accountsInCollision(ctx context.Context, _ client.Object) []reconcile.Request {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing CredentialAccounts")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		a := &list.Items[i]
		if a.GetOwner() != credv1.OwnerPlatform && conditions.GetReason(a, credv1.SecretFailedCondition) == credv1.AccountCollisionReason {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(a)})
		}
	}
	return reqs
}
