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
	elsewhere, _, err := r.Shard.HandOver(ctx, r.Client, r.APIReader, &ta, trustv1.TrustAnchorKind, req.NamespacedName, TrustAnchorFieldOwner)
	return !elsewhere && err == nil, err
}

// takeOver moves the TrustAnchor of want's release that another shard holds
// to this shard, which serves the release (shard.TakeOver).
func (r *TrustAnchorReconciler) takeOver(ctx context.Context, want *trustv1.TrustAnchor) error {
	return r.Shard.TakeOver(ctx, r.Client, r.APIReader, &trustv1.TrustAnchor{}, trustv1.TrustAnchorKind, want, TrustAnchorFieldOwner)
}
