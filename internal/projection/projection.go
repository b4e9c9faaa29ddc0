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

// Package projection is the one write path of the trust anchors: it guards
// a lifted CA value and writes it, re-encoded, as the key-free Secret
// <release>.tenant-ca, owner-referenced to the release's HelmRelease. Every
// leg of source discovery writes through Write, so the guard cannot be
// bypassed by a new leg.
package projection

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
)

// ErrCollision is returned when a Secret of the projection's name exists
// that this writer did not create. It is never written.
var ErrCollision = errors.New("a Secret of that name exists that credo did not create")

// Writer writes projections.
type Writer struct {
	// Client writes; Reader reads uncached (the projection's current data and
	// managed fields).
	Client client.Client
	Reader client.Reader
	// FieldOwner is the field manager of every write; a Secret without an
	// entry of this manager is foreign.
	FieldOwner string
	// TenantCALabel is stamped on every projection, e.g.
	// internal.cozystack.io/tenant-ca.
	TenantCALabel string
}

// Result describes a successful Write.
type Result struct {
	// Bundle is what was projected.
	Bundle *pem.Bundle
	// Changed is true when the projection's content changed (or was created).
	Changed bool
}

// Write guards raw, the value lifted from the source, and projects it into
// the Secret <release>.tenant-ca in namespace. A refused value (private key,
// anything not a certificate) returns the guard's *pem.Error and writes
// nothing, leaving any existing projection as it was. A foreign Secret of the
// name returns ErrCollision.
func (w *Writer) Write(ctx context.Context, namespace string, release *helmv2.HelmRelease, raw []byte) (*Result, error) {
	bundle, err := pem.Parse(raw)
	if err != nil {
		return nil, err
	}
	name := release.Name + trustv1.ProjectionSuffix
	var current corev1.Secret
	err = w.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &current)
	switch {
	case apierrors.IsNotFound(err):
		return w.create(ctx, w.desired(namespace, name, release, bundle), bundle)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	if !w.owns(&current) {
		return nil, ErrCollision
	}
	changed := !bytes.Equal(current.Data[trustv1.ProjectionKey], bundle.PEM)
	if len(current.Data) != 1 {
		// Someone added a key. Apply cannot remove a field another manager
		// owns; replace the data with an update, under the same precondition.
		return w.replace(ctx, &current, release, bundle, changed)
	}
	if !changed && w.metadataCurrent(&current, release) {
		return &Result{Bundle: bundle, Changed: false}, nil
	}
	// The resourceVersion precondition makes the apply fail, rather than
	// write, if the Secret was replaced by a foreign one since it was read.
	apply := w.applyConfig(namespace, name, release, bundle).WithResourceVersion(current.ResourceVersion)
	if err := w.Client.Apply(ctx, apply, client.FieldOwner(w.FieldOwner), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("applying Secret %s: %w", name, err)
	}
	return &Result{Bundle: bundle, Changed: changed}, nil
}

// replace overwrites a projection of ours whose data holds more than
// ca.crt, with the resourceVersion read as the precondition.
func (w *Writer) replace(ctx context.Context, current *corev1.Secret, release *helmv2.HelmRelease, bundle *pem.Bundle, changed bool) (*Result, error) {
	desired := w.desired(current.Namespace, current.Name, release, bundle)
	next := current.DeepCopy()
	next.Data, next.StringData, next.Type = desired.Data, nil, desired.Type
	next.OwnerReferences = desired.OwnerReferences
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	next.Labels[w.TenantCALabel] = "true"
	if err := w.Client.Update(ctx, next, client.FieldOwner(w.FieldOwner)); err != nil {
		return nil, fmt.Errorf("replacing Secret %s: %w", current.Name, err)
	}
	return &Result{Bundle: bundle, Changed: changed}, nil
}

// create creates the projection. Create, not apply, so that a foreign Secret
// created since the read makes it fail with AlreadyExists instead of merging.
func (w *Writer) create(ctx context.Context, s *corev1.Secret, bundle *pem.Bundle) (*Result, error) {
	if err := w.Client.Create(ctx, s, client.FieldOwner(w.FieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, ErrCollision
		}
		return nil, fmt.Errorf("creating Secret %s: %w", s.Name, err)
	}
	return &Result{Bundle: bundle, Changed: true}, nil
}

func (w *Writer) applyConfig(namespace, name string, release *helmv2.HelmRelease, bundle *pem.Bundle) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(name, namespace).
		WithLabels(map[string]string{w.TenantCALabel: "true"}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(helmv2.GroupVersion.String()).
			WithKind(helmv2.HelmReleaseKind).
			WithName(release.Name).
			WithUID(release.UID).
			WithBlockOwnerDeletion(false)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{trustv1.ProjectionKey: bundle.PEM})
}

func (w *Writer) desired(namespace, name string, release *helmv2.HelmRelease, bundle *pem.Bundle) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels:    map[string]string{w.TenantCALabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         helmv2.GroupVersion.String(),
				Kind:               helmv2.HelmReleaseKind,
				Name:               release.Name,
				UID:                release.UID,
				BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{trustv1.ProjectionKey: bundle.PEM},
	}
}

// owns reports whether the Secret was written by this writer's field owner.
func (w *Writer) owns(s *corev1.Secret) bool {
	for _, mf := range s.ManagedFields {
		if mf.Manager == w.FieldOwner {
			return true
		}
	}
	return false
}

// metadataCurrent reports whether the label and the owner reference are as
// they should be.
func (w *Writer) metadataCurrent(s *corev1.Secret, release *helmv2.HelmRelease) bool {
	if s.Labels[w.TenantCALabel] != "true" || s.Type != corev1.SecretTypeOpaque {
		return false
	}
	for _, ref := range s.OwnerReferences {
		if ref.UID == release.UID && ref.Kind == helmv2.HelmReleaseKind && ref.BlockOwnerDeletion != nil && !*ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}
