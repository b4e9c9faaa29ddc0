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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/shard"
)

// Sharding (docs/guides/sharding.md). The shard of everything credo does
// for a release is the shard of its HelmRelease: the trust-controller and
// the credential-controller cache only the HelmReleases, TrustAnchors and
// CredentialAccounts of their shard, and the objects credo creates for a
// release carry its shard label. When a release moves to another shard,
// the shard that holds its objects hands them over (Shard.Follow) on the
// release's deletion event from its cache; the new shard takes over an
// object its create finds held elsewhere, in case the old shard is gone.
// Secrets, Namespaces and the cluster-scoped rules are cached whole. The
// enrollment-controller caches everything (its listener, on every replica,
// answers for every policy) and reconciles only the policies of its shard.

var helmReleaseGVK = helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)

// TrustShardedObjects are the kinds the trust-controller caches for its
// shard only: cmd/trust-controller passes them to Shard.ByObject.
func TrustShardedObjects() []client.Object {
	return []client.Object{&helmv2.HelmRelease{}, &trustv1.TrustAnchor{}}
}

// CredentialShardedObjects are the kinds the credential-controller caches
// for its shard only: cmd/credential-controller passes them to
// Shard.ByObject.
func CredentialShardedObjects() []client.Object {
	return []client.Object{&helmv2.HelmRelease{}, &credv1.CredentialAccount{}}
}

// shardGate runs a reconciler only for the requests its shard serves.
type shardGate struct {
	inner  reconcile.Reconciler
	serves func(context.Context, ctrl.Request) (bool, error)
}

// Reconcile asks serves first; a request of another shard ends there, with
// nothing written and no metric recorded.
func (g shardGate) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ok, err := g.serves(ctx, req)
	if err != nil || !ok {
		return ctrl.Result{}, err
	}
	return g.inner.Reconcile(ctx, req)
}

// gated puts r behind serves when the controller serves one shard.
func gated(s shard.Shard, r reconcile.Reconciler, serves func(context.Context, ctrl.Request) (bool, error)) reconcile.Reconciler {
	if !s.Sharded() {
		return r
	}
	return shardGate{inner: r, serves: serves}
}

// servesRelease reports whether the request's release is this shard's. A
// request whose HelmRelease is in the cache is; one whose HelmRelease and
// TrustAnchor are both absent has nothing here (their events come to the
// shard that holds them). A TrustAnchor held here whose release is not is
// handed over when the release exists in another shard, and reconciled
// (as HelmReleaseNotFound) when it does not exist.
func (r *TrustAnchorReconciler) servesRelease(ctx context.Context, req ctrl.Request) (bool, error) {
	if err := r.Get(ctx, req.NamespacedName, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
		return err == nil, err
	}
	var ta trustv1.TrustAnchor
	if err := r.Get(ctx, req.NamespacedName, &ta); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	owner, err := r.Shard.Elsewhere(ctx, r.APIReader, helmReleaseGVK, req.NamespacedName)
	if err != nil || owner == nil {
		return err == nil, err
	}
	if moved, err := r.Shard.Follow(ctx, r.Client, &ta, owner, client.FieldOwner(TrustAnchorFieldOwner)); err != nil || moved {
		logHandOver(ctx, "TrustAnchor", owner.GetLabels(), err)
		return false, err
	}
	return false, nil
}

// takeOver moves a release's TrustAnchor that another shard holds to this
// shard, which serves the release; called when creating it found it there.
// Its holder hands it over itself when it runs; this covers a holder that
// no longer runs, or TrustAnchors made before sharding was turned on.
func (r *TrustAnchorReconciler) takeOver(ctx context.Context, hr *helmv2.HelmRelease) error {
	if !r.Shard.Sharded() {
		return nil
	}
	var ta trustv1.TrustAnchor
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(hr), &ta); err != nil || r.Shard.Serves(&ta) {
		return client.IgnoreNotFound(err)
	}
	moved, err := r.Shard.Follow(ctx, r.Client, &ta, hr, client.FieldOwner(TrustAnchorFieldOwner))
	if err != nil || moved {
		logHandOver(ctx, "TrustAnchor", hr.GetLabels(), err)
	}
	return err
}

// servesAccount reports whether the request's CredentialAccount is this
// shard's to reconcile: it is in the cache, and its release is too or
// exists in no shard. An account whose release is in another shard is
// handed over to it.
func (r *CredentialAccountReconciler) servesAccount(ctx context.Context, req ctrl.Request) (bool, error) {
	var acct credv1.CredentialAccount
	if err := r.Get(ctx, req.NamespacedName, &acct); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	key := client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}
	if err := r.Get(ctx, key, &helmv2.HelmRelease{}); !apierrors.IsNotFound(err) {
		return err == nil, err
	}
	owner, err := r.Shard.Elsewhere(ctx, r.APIReader, helmReleaseGVK, key)
	if err != nil || owner == nil {
		return err == nil, err
	}
	if moved, err := r.Shard.Follow(ctx, r.Client, &acct, owner, client.FieldOwner(CredentialFieldOwner)); err != nil || moved {
		logHandOver(ctx, "CredentialAccount", owner.GetLabels(), err)
		return false, err
	}
	return false, nil
}

// servesOwnLabels reports whether the request's object, of obj's kind, is
// this shard's: its own labels match the selector. An EnrollmentPolicy is
// served so, and so is the status of a cluster-scoped rule.
func servesOwnLabels(c client.Reader, s shard.Shard, obj client.Object) func(context.Context, ctrl.Request) (bool, error) {
	return func(ctx context.Context, req ctrl.Request) (bool, error) {
		o, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return false, nil
		}
		if err := c.Get(ctx, req.NamespacedName, o); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return s.Serves(o), nil
	}
}

// servesWorkload reports whether the request's Workload is this shard's: a
// Workload follows its EnrollmentPolicy, and its own labels only when the
// policy does not exist.
func servesWorkload(c client.Reader, s shard.Shard) func(context.Context, ctrl.Request) (bool, error) {
	return func(ctx context.Context, req ctrl.Request) (bool, error) {
		var wl enrollv1.Workload
		if err := c.Get(ctx, req.NamespacedName, &wl); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var p enrollv1.EnrollmentPolicy
		err := c.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: wl.Spec.Policy}, &p)
		switch {
		case err == nil:
			return s.Serves(&p), nil
		case apierrors.IsNotFound(err):
			return s.Serves(&wl), nil
		default:
			return false, err
		}
	}
}

// logHandOver logs an object moved to its release's shard.
func logHandOver(ctx context.Context, kind string, to map[string]string, err error) {
	log := ctrl.LoggerFrom(ctx)
	if err != nil {
		log.Error(err, "moving to the shard of its release", "kind", kind)
		return
	}
	log.Info("moved to the shard of its release", "kind", kind, shard.Key, to[shard.Key])
}

// handOver moves a generated account whose release is in another shard to
// that shard, and reports whether it did; unsharded, or when the release
// is gone, it does nothing.
func (r *AccountSourceReconciler) handOver(ctx context.Context, acct *credv1.CredentialAccount) (bool, error) {
	key := client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}
	owner, err := r.Shard.Elsewhere(ctx, r.APIReader, helmReleaseGVK, key)
	if err != nil || owner == nil {
		return false, err
	}
	moved, err := r.Shard.Follow(ctx, r.Client, acct, owner, client.FieldOwner(CredentialFieldOwner))
	if err != nil || moved {
		logHandOver(ctx, "CredentialAccount", owner.GetLabels(), err)
	}
	return moved, err
}

// takeOver moves a generated account that another shard holds to this
// shard, which serves its release; want carries the release's shard labels.
func (r *AccountSourceReconciler) takeOver(ctx context.Context, want *credv1.CredentialAccount) error {
	if !r.Shard.Sharded() {
		return nil
	}
	var cur credv1.CredentialAccount
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), &cur); err != nil || r.Shard.Serves(&cur) {
		return client.IgnoreNotFound(err)
	}
	moved, err := r.Shard.Follow(ctx, r.Client, &cur, want, client.FieldOwner(CredentialFieldOwner))
	if err != nil || moved {
		logHandOver(ctx, "CredentialAccount", want.GetLabels(), err)
	}
	return err
}
