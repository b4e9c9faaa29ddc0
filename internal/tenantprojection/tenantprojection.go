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

// Package tenantprojection reads the platform's TenantProjection sentinels
// (internal.cozystack.io/v1alpha1, short name tproj) and recognizes the
// projections its own controller writes. A chart written for the platform
// renders one sentinel per release: spec.projections[] {type: CACert,
// sourceSecretName, sourceKey (ca.crt)}, labelled by helm-controller with
// the release's name. The platform's controller projects the source into
// <release>.tenant-ca, owner-referenced to the sentinel (controller: true)
// and marked with CopyLabel, SourceAnnotation and SelectorsAnnotation.
//
// The kind is the platform's: credo ships no CRD for it, decodes it
// unstructured, and reads only what the platform's API defines. Its Ready
// condition carries the platform's own reasons, so `kubectl get tproj`
// means the same whoever projects.
package tenantprojection

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Group is the platform's internal API group.
const Group = "internal.cozystack.io"

// GVK is the sentinel's kind.
var GVK = schema.GroupVersionKind{Group: Group, Version: "v1alpha1", Kind: "TenantProjection"}

const (
	// TypeCACert is the one projection type: a CA certificate.
	TypeCACert = "CACert"
	// DefaultSourceKey is the source key when sourceKey is omitted.
	DefaultSourceKey = "ca.crt"
	// ReleaseLabel names the sentinel's release: helm-controller stamps it
	// on everything a release renders.
	ReleaseLabel = "helm.toolkit.fluxcd.io/name"

	// CopyLabel, SourceAnnotation and SelectorsAnnotation are the platform
	// controller's marks on its projections (besides the tenant-ca label,
	// which credo stamps too). credo removes them when it takes a
	// projection over: they would tell the platform's readers it is theirs.
	CopyLabel           = Group + "/ca-cert-copy"
	SourceAnnotation    = Group + "/ca-cert-source"
	SelectorsAnnotation = Group + "/ca-cert-selectors"
)

// Reasons of the sentinel's Ready condition, in the platform's vocabulary:
// credo writes them only when it projects the sentinels itself.
const (
	ProjectedReason           = "Projected"
	SourceNotFoundReason      = "SourceNotFound"
	SourceNotReadyReason      = "SourceNotReady"
	SourceRejectedReason      = "SourceRejected"
	ProjectionCollisionReason = "ProjectionCollision"
	NoReleaseReason           = "NoRelease"
	ReleaseContestedReason    = "ReleaseContested"
)

// Source is one CACert entry: a Secret in the sentinel's namespace and its key.
type Source struct {
	SecretName string
	Key        string
}

// Sentinel is what credo reads of a TenantProjection.
type Sentinel struct {
	Namespace, Name string
	UID             string
	Generation      int64
	// Release is the HelmRelease the sentinel belongs to (ReleaseLabel);
	// empty when the sentinel carries no such label.
	Release string
	// Sources are its CACert entries with a source name, in order.
	Sources []Source
}

// New returns an empty sentinel object to read into.
func New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

// NewList returns an empty list of sentinels to list into.
func NewList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(GVK.GroupVersion().WithKind(GVK.Kind + "List"))
	return l
}

// Decode reads a sentinel. Entries of another type, or without a source
// name (the platform's old CRD allowed one), claim nothing.
func Decode(u *unstructured.Unstructured) Sentinel {
	s := Sentinel{
		Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()),
		Generation: u.GetGeneration(), Release: u.GetLabels()[ReleaseLabel],
	}
	entries, _, _ := unstructured.NestedSlice(u.Object, "spec", "projections")
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		name, _ := m["sourceSecretName"].(string)
		key, _ := m["sourceKey"].(string)
		if typ != TypeCACert || strings.TrimSpace(name) == "" {
			continue
		}
		if key = strings.TrimSpace(key); key == "" {
			key = DefaultSourceKey
		}
		s.Sources = append(s.Sources, Source{SecretName: name, Key: key})
	}
	return s
}

// OwnerReference is the owner reference the platform's controller puts on
// the projection of s: with it, that controller takes the projection for
// its own (it matches by the sentinel's name).
func (s Sentinel) OwnerReference() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         GVK.GroupVersion().String(),
		Kind:               GVK.Kind,
		Name:               s.Name,
		UID:                types.UID(s.UID),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// PlatformOwner returns the owner reference by which o belongs to a
// TenantProjection, if it has one: the mark of a projection the
// platform's controller wrote (or was handed).
func PlatformOwner(o metav1.Object) (metav1.OwnerReference, bool) {
	for _, ref := range o.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == Group && ref.Kind == GVK.Kind {
			return ref, true
		}
	}
	return metav1.OwnerReference{}, false
}

// List returns the sentinels in namespace that name release, but those
// being deleted, sorted by name.
func List(ctx context.Context, c client.Reader, namespace, release string) ([]Sentinel, error) {
	l := NewList()
	if err := c.List(ctx, l, client.InNamespace(namespace), client.MatchingLabels{ReleaseLabel: release}); err != nil {
		return nil, fmt.Errorf("listing TenantProjections: %w", err)
	}
	out := make([]Sentinel, 0, len(l.Items))
	for i := range l.Items {
		if l.Items[i].GetDeletionTimestamp() == nil {
			out = append(out, Decode(&l.Items[i]))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SetReady writes the sentinel's Ready condition and observedGeneration
// when they differ from what it holds, keeping its other conditions, with
// an optimistic lock: a concurrent writer's status is never overwritten
// unread. It reads the sentinel from r (a cache is fine: a stale read
// conflicts) and writes with c.
func SetReady(ctx context.Context, r client.Reader, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, message, fieldOwner string) error {
	u := New()
	if err := r.Get(ctx, key, u); err != nil {
		return client.IgnoreNotFound(err)
	}
	var conds []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var cond metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err == nil {
			conds = append(conds, cond)
		}
	}
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if cur := apimeta.FindStatusCondition(conds, "Ready"); cur != nil && observed == u.GetGeneration() &&
		cur.Status == status && cur.Reason == reason && cur.Message == message && cur.ObservedGeneration == u.GetGeneration() {
		return nil
	}
	before := u.DeepCopy()
	apimeta.SetStatusCondition(&conds, metav1.Condition{
		Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: u.GetGeneration(),
	})
	out := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	if err := unstructured.SetNestedSlice(u.Object, out, "status", "conditions"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, u.GetGeneration(), "status", "observedGeneration"); err != nil {
		return err
	}
	if err := c.Status().Patch(ctx, u, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("writing the status of TenantProjection %s: %w", key.Name, client.IgnoreNotFound(err))
	}
	return nil
}
