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

package shard

import (
	"context"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// HelmReleaseGVK is the kind whose shard decides the shard of everything
// credo does for a release.
var HelmReleaseGVK = helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)

// ServesFunc reports whether a request is the shard's to reconcile.
type ServesFunc func(context.Context, ctrl.Request) (bool, error)

// gate runs a reconciler only for the requests its shard serves.
type gate struct {
	inner  reconcile.Reconciler
	serves ServesFunc
}

// Reconcile asks serves first; a request of another shard ends there, with
// nothing written and no metric recorded.
func (g gate) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ok, err := g.serves(ctx, req)
	if err != nil || !ok {
		return ctrl.Result{}, err
	}
	return g.inner.Reconcile(ctx, req)
}

// Gate puts r behind serves when the controller serves one shard; an
// unsharded controller reconciles every request.
func (s Shard) Gate(r reconcile.Reconciler, serves ServesFunc) reconcile.Reconciler {
	if !s.Sharded() {
		return r
	}
	return gate{inner: r, serves: serves}
}

// ServesOwnLabels reports whether the request's object, of obj's kind, is
// the shard's: its own labels match the selector. An EnrollmentPolicy is
// served so, and so is the status of a cluster-scoped rule.
func (s Shard) ServesOwnLabels(c client.Reader, obj client.Object) ServesFunc {
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

// LogHandOver logs an object moved to its release's shard, or the failure
// to move it.
func LogHandOver(ctx context.Context, kind string, to map[string]string, err error) {
	log := ctrl.LoggerFrom(ctx)
	if err != nil {
		log.Error(err, "moving to the shard of its release", "kind", kind)
		return
	}
	log.Info("moved to the shard of its release", "kind", kind, Key, to[Key])
}

// HandOver moves obj, held here, to the shard of its release when the
// release (key) exists in another shard. It reports whether the release is
// elsewhere (obj is then not this shard's to reconcile, moved or not) and
// whether obj moved; kind names obj in the log line.
func (s Shard) HandOver(ctx context.Context, c client.Client, r client.Reader, obj client.Object, kind string,
	release client.ObjectKey, fieldOwner string) (elsewhere, moved bool, err error) {
	owner, err := s.Elsewhere(ctx, r, HelmReleaseGVK, release)
	if err != nil || owner == nil {
		return false, false, err
	}
	moved, err = s.Follow(ctx, c, obj, owner, client.FieldOwner(fieldOwner))
	if err != nil || moved {
		LogHandOver(ctx, kind, owner.GetLabels(), err)
	}
	return true, moved, err
}

// TakeOver moves the object of want's key that another shard holds (read
// uncached into cur) to this shard, stamped as want: called when creating
// want found it there. Its holder hands it over itself when it runs; this
// covers a holder that no longer runs, or objects made before sharding was
// turned on. Unsharded, it does nothing.
func (s Shard) TakeOver(ctx context.Context, c client.Client, r client.Reader, cur client.Object, kind string,
	want client.Object, fieldOwner string) error {
	if !s.Sharded() {
		return nil
	}
	if err := r.Get(ctx, client.ObjectKeyFromObject(want), cur); err != nil || s.Serves(cur) {
		return client.IgnoreNotFound(err)
	}
	moved, err := s.Follow(ctx, c, cur, want, client.FieldOwner(fieldOwner))
	if err != nil || moved {
		LogHandOver(ctx, kind, want.GetLabels(), err)
	}
	return err
}
