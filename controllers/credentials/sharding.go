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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// ShardedObjects are the kinds the credential-controller caches for its shard only:
// ConfigureCache passes them to Shard.ByObject.
func ShardedObjects() []client.Object {
	return []client.Object{&helmv2.HelmRelease{}, &credv1.CredentialAccount{}}
}

// servesAccount reports whether the request's CredentialAccount is this
// shard's to reconcile: it is in the cache, and its release is too or
// exists in no shard. An account whose release is in another shard is
// handed over to it. A request for an account not in the cache (deleted:
// only this shard saw it go) is served, to sweep what it left.
func (r *CredentialAccountReconciler) servesAccount(ctx context.Context, req ctrl.Request) (bool, error) {
	var acct credv1.CredentialAccount
	if err := r.Get(ctx, req.NamespacedName, &acct); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	key := client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}
	if err := r.Get(ctx, key, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
		return err == nil, err
	}
	elsewhere, _, err := r.Shard.HandOver(ctx, r.Client, r.APIReader, &acct, credv1.CredentialAccountKind, key, CredentialFieldOwner)
	return !elsewhere && err == nil, err
}

// handOver moves a generated account whose release is in another shard to
// that shard, and reports whether it did; unsharded, or when the release
// is gone, it does nothing.
func (r *AccountSourceReconciler) handOver(ctx context.Context, acct *credv1.CredentialAccount) (bool, error) {
	key := client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}
	_, moved, err := r.Shard.HandOver(ctx, r.Client, r.APIReader, acct, credv1.CredentialAccountKind, key, CredentialFieldOwner)
	return moved, err
}

// takeOver moves a generated account that another shard holds to this
// shard, which serves its release; want carries the release's shard labels.
func (r *AccountSourceReconciler) takeOver(ctx context.Context, want *credv1.CredentialAccount) error {
	return r.Shard.TakeOver(ctx, r.Client, r.APIReader, &credv1.CredentialAccount{}, credv1.CredentialAccountKind, want, CredentialFieldOwner)
}
