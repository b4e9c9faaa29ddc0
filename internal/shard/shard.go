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

// Package shard splits the objects of a controller between several
// instances the way Flux controllers are sharded: each instance runs with
// --watch-label-selector (parsed by fluxcd/pkg/runtime's WatchOptions), its
// caches hold only the objects the selector matches, and the objects it
// derives from a release carry the release's shard label, so that the
// selector holds for them too:
//
//	s, err := shard.New(fluxcontroller.WatchOptions{LabelSelector: "sharding.fluxcd.io/key=shard1"})
//	cacheOpts.ByObject = s.ByObject(&helmv2.HelmRelease{}, &trustv1.TrustAnchor{})
//	if s.Serves(obj) { ... }
//
// The zero Shard is unsharded: it serves everything and changes nothing.
//
// In credo (docs/guides/sharding.md), the shard of everything credo does
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
package shard

import (
	"context"
	"fmt"
	"sort"

	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Key is the label key of Flux's sharding convention: an object labelled
// sharding.fluxcd.io/key=shard1 is served by the instances started with
// --watch-label-selector=sharding.fluxcd.io/key=shard1.
const Key = "sharding.fluxcd.io/key"

// Shard is the part of the cluster's objects one controller instance serves.
type Shard struct {
	selector labels.Selector
	keys     []string
}

// New returns the shard that the watch options' label selector describes;
// an empty selector is the unsharded zero Shard.
func New(opts fluxcontroller.WatchOptions) (Shard, error) {
	ls, err := fluxcontroller.GetWatchLabelSelector(opts)
	if err != nil {
		return Shard{}, fmt.Errorf("--watch-label-selector %q: %w", opts.LabelSelector, err)
	}
	if ls == nil {
		return Shard{}, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return Shard{}, fmt.Errorf("--watch-label-selector %q: %w", opts.LabelSelector, err)
	}
	if sel.Empty() {
		return Shard{}, nil
	}
	keys := map[string]bool{Key: true}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		keys[r.Key()] = true
	}
	s := Shard{selector: sel}
	for k := range keys {
		s.keys = append(s.keys, k)
	}
	sort.Strings(s.keys)
	return s, nil
}

// Sharded reports whether the instance serves only part of the objects.
func (s Shard) Sharded() bool { return s.selector != nil }

// String is the selector, or "" when unsharded.
func (s Shard) String() string {
	if s.selector == nil {
		return ""
	}
	return s.selector.String()
}

// Serves reports whether the object's labels match the shard's selector.
func (s Shard) Serves(o metav1.Object) bool {
	return s.selector == nil || s.selector.Matches(labels.Set(o.GetLabels()))
}

// Keys are the label keys an object derived from a release copies from
// it: sharding.fluxcd.io/key, always (so that objects made before sharding
// was turned on are already in place), and every key the selector names.
func (s Shard) Keys() []string {
	if s.selector == nil {
		return []string{Key}
	}
	return s.keys
}

// ByObject restricts the cache of each given kind to the shard's objects;
// nil when unsharded. Kinds left out are cached whole.
func (s Shard) ByObject(objs ...client.Object) map[client.Object]cache.ByObject {
	if s.selector == nil {
		return nil
	}
	out := make(map[client.Object]cache.ByObject, len(objs))
	for _, o := range objs {
		out[o] = cache.ByObject{Label: s.selector}
	}
	return out
}

// Stamp sets the shard labels of obj (Keys) to those of owner, removing
// the ones owner lacks, and reports whether anything changed.
func (s Shard) Stamp(obj, owner metav1.Object) bool {
	want := owner.GetLabels()
	l := obj.GetLabels()
	changed := false
	for _, k := range s.Keys() {
		v, ok := want[k]
		cur, has := l[k]
		switch {
		case ok && (!has || cur != v):
			if l == nil {
				l = map[string]string{}
			}
			l[k] = v
			changed = true
		case !ok && has:
			delete(l, k)
			changed = true
		}
	}
	if changed {
		obj.SetLabels(l)
	}
	return changed
}

// Follow patches obj's shard labels to those of owner when they differ,
// and reports whether it did: the object moves to the owner's shard. Only
// the labels change; obj is updated in place.
func (s Shard) Follow(ctx context.Context, c client.Client, obj client.Object, owner metav1.Object, opts ...client.PatchOption) (bool, error) {
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copying %T", obj)
	}
	if !s.Stamp(obj, owner) {
		return false, nil
	}
	if err := c.Patch(ctx, obj, client.MergeFrom(before), opts...); err != nil {
		return false, fmt.Errorf("moving %s to the shard of its owner: %w", obj.GetName(), err)
	}
	return true, nil
}

// Elsewhere reads an object's metadata uncached and returns it when the
// object exists and another shard serves it; nil when it does not exist,
// when this shard serves it, and always when unsharded (without a read).
// It tells a release that left this shard's cache from one that is gone.
func (s Shard) Elsewhere(ctx context.Context, r client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey) (*metav1.PartialObjectMetadata, error) {
	if s.selector == nil {
		return nil, nil
	}
	var m metav1.PartialObjectMetadata
	m.SetGroupVersionKind(gvk)
	if err := r.Get(ctx, key, &m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, key, err)
	}
	if s.Serves(&m) {
		return nil, nil
	}
	return &m, nil
}
