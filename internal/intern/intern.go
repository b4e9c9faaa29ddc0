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

// Package intern shares, among the objects a controller caches, the
// strings of their metadata that repeat: the namespace, the names (a
// release's name is its HelmRelease's, its TrustAnchor's, its projection's
// owner's and a label's value), label and annotation keys and short values,
// owner references' kinds and API versions, managers' names. An informer
// decodes each object on its own, so without it every copy is held apart:
// with thousands of releases in a namespace, its name alone is held once
// per cached object. Strings unique to an object (its UID, its resource
// version) are left alone: sharing them would cost more than it saves.
//
// The canonical copies come from the standard library's unique package,
// whose table holds them weakly: nothing is kept for a name once no object
// holds it (a deleted release leaves nothing behind), and a string is
// shared among the objects decoded while the table still knows it. The
// table forgets a copy at a garbage collection when only strings (not
// handles) refer to it, so objects decoded on either side of a collection
// may hold two copies: at a cold start, where an informer's first list
// decodes a kind's objects together, most are shared.
package intern

import (
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// maxValue is the longest label or annotation value shared: longer ones
// (a digest, a message) are rarely the same in two objects.
const maxValue = 64

// String returns the canonical copy of s.
func String(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// Meta shares obj's repeating metadata strings.
func Meta(obj metav1.Object) {
	obj.SetNamespace(String(obj.GetNamespace()))
	obj.SetName(String(obj.GetName()))
	obj.SetGenerateName(String(obj.GetGenerateName()))
	if l := obj.GetLabels(); len(l) > 0 {
		obj.SetLabels(stringMap(l))
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		obj.SetAnnotations(stringMap(a))
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = String(r.APIVersion), String(r.Kind), String(r.Name)
	}
	mfs := obj.GetManagedFields()
	for i := range mfs {
		m := &mfs[i]
		m.Manager, m.APIVersion, m.FieldsType, m.Subresource = String(m.Manager), String(m.APIVersion), String(m.FieldsType), String(m.Subresource)
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = String(f[i])
		}
	}
}

// stringMap returns m with its keys and short values shared.
func stringMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) <= maxValue {
			v = String(v)
		}
		out[String(k)] = v
	}
	return out
}

// Transform returns a cache transform that applies next (when not nil) and
// then shares the metadata strings of what it returns. A tombstone passes
// unchanged.
func Transform(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out := in
		if next != nil {
			var err error
			if out, err = next(in); err != nil {
				return out, err
			}
		}
		if obj, err := meta.Accessor(out); err == nil {
			Meta(obj)
		}
		return out, nil
	}
}

// Cache makes every transform of o share metadata strings: its default
// transform and each kind's own (which replaces the default for that
// kind). Call it last, once the transforms are set.
func Cache(o *cache.Options) {
	o.DefaultTransform = Transform(o.DefaultTransform)
	for obj, by := range o.ByObject {
		if by.Transform != nil {
			by.Transform = Transform(by.Transform)
			o.ByObject[obj] = by
		}
	}
}
