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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/shard"
)

// ShardedObjects are the kinds the trust-controller caches for its shard only:
// ConfigureCache passes them to Shard.ByObject.
func ShardedObjects() []client.Object {
	return []client.Object{&helmv2.HelmRelease{}, &trustv1.TrustAnchor{}}
}

// servesWithoutRelease reports whether a request whose HelmRelease is not
// in this shard's cache is still this shard's (a release in the cache is).
// Unsharded, it is. A TrustAnchor held here whose release is not is handed
// over when the release exists in another shard, and reconciled (as
// HelmReleaseNotFound) when it does not exist; with no TrustAnchor either,
// there is nothing here (their events come to the shard that holds them).
func (r *TrustAnchorReconciler) servesWithoutRelease(ctx context.Context, req ctrl.Request) (bool, error) {
	if !r.Shard.Sharded() {
		return true, nil
	}
	var ta trustv1.TrustAnchor
	if err := r.Get(ctx, req.NamespacedName, &ta); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	owner, err := r.Shard.Elsewhere(ctx, r.APIReader, shard.HelmReleaseGVK, req.NamespacedName)
	if err != nil || owner == nil {
		return err == nil, err
	}
	if moved, err := r.Shard.Follow(ctx, r.Client, &ta, owner, client.FieldOwner(TrustAnchorFieldOwner)); err != nil || moved {
		shard.LogHandOver(ctx, "TrustAnchor", owner.GetLabels(), err)
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
		shard.LogHandOver(ctx, "TrustAnchor", hr.GetLabels(), err)
	}
	return err
}
