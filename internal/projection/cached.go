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

package projection

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
)

// DigestAnnotation is stamped on every projection: the hex SHA-256 of its
// ca.crt. With it, the metadata a cache holds tells whether a projection
// is current, without reading its data.
const DigestAnnotation = "trust.credo.dev/ca-sha256"

// digest is the value of DigestAnnotation for bundle.
func digest(bundle *pem.Bundle) string {
	sum := sha256.Sum256(bundle.PEM)
	return hex.EncodeToString(sum[:])
}

// errStale says the cached metadata could not settle a write: the uncached
// path decides.
var errStale = errors.New("the cached projection is not enough to decide")

// writeFromCache decides and writes from the projection's metadata in the
// Cache, without reading its data:
//
//   - absent: create (AlreadyExists, the cache lagging behind a create or a
//     foreign Secret, is errStale: the uncached read tells them apart);
//   - written by no manager but this writer's, digest and metadata current,
//     at the resourceVersion this writer last wrote or read: nothing is
//     written (at any other version, errStale: the data is read);
//   - written by no manager but this writer's, otherwise: server-side apply
//     with the cached resourceVersion as the precondition (a conflict, the
//     cache lagging, is errStale).
//
// Anything else (another manager's entry: a foreign Secret, a key added or
// a ca.crt edited by someone else; no digest yet; an owner reference to a
// former owner; a projection another controller claims) is errStale.
func (w *Writer) writeFromCache(ctx context.Context, desired *corev1.Secret, bundle *pem.Bundle) (*Result, error) {
	var cached metav1.PartialObjectMetadata
	cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := w.Cache.Get(ctx, client.ObjectKeyFromObject(desired), &cached)
	switch {
	case apierrors.IsNotFound(err):
		res, err := w.create(ctx, desired, bundle)
		if errors.Is(err, ErrCollision) {
			return nil, errStale
		}
		return res, err
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s from the cache: %w", desired.Name, err)
	}
	have, ok := cached.Annotations[DigestAnnotation]
	if !ok || !w.onlyOurs(&cached) || staleOwner(&cached, ownerOf(desired)) || w.Adopt.claimed(&cached) {
		return nil, errStale
	}
	changed := have != desired.Annotations[DigestAnnotation]
	if !changed && w.metadataCurrent(&cached, desired.Annotations[DigestAnnotation], ownerOf(desired)) {
		// Metadata can be written by anyone under any field manager's
		// name: only the version this writer wrote or read is known current.
		if !w.Echoes.current(client.ObjectKeyFromObject(desired), cached.ResourceVersion) {
			return nil, errStale
		}
		return &Result{Bundle: bundle, Changed: false}, nil
	}
	res, err := w.apply(ctx, cached.ResourceVersion, desired, bundle, changed)
	if apierrors.IsConflict(err) {
		return nil, errStale
	}
	return res, err
}

// onlyOurs reports whether the Secret was written by this writer and by no
// other manager: its ca.crt, labels and owner references are those this
// writer last wrote, and it holds no key of anyone else.
func (w *Writer) onlyOurs(s metav1.Object) bool {
	if !w.owns(s) {
		return false
	}
	for _, mf := range s.GetManagedFields() {
		if mf.Subresource == "" && mf.Manager != w.FieldOwner {
			return false
		}
	}
	return true
}

// CacheTransform is the cache transform of Secrets for a controller whose
// writer has a Cache: it keeps the managedFields of projections (manager,
// operation and subresource: what onlyOurs reads; not the field sets) and
// drops every other Secret's, as cache.TransformStripManagedFields does.
// It drops kubectl's last-applied-configuration of every Secret: on a Secret
// applied with kubectl it holds the whole data, private keys included.
func CacheTransform() toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil //nolint:nilerr // a tombstone passes unchanged
		}
		if a := obj.GetAnnotations(); a[corev1.LastAppliedConfigAnnotation] != "" {
			delete(a, corev1.LastAppliedConfigAnnotation)
			obj.SetAnnotations(a)
		}
		if !strings.HasSuffix(obj.GetName(), trustv1.ProjectionSuffix) {
			obj.SetManagedFields(nil)
			return in, nil
		}
		mfs := obj.GetManagedFields()
		kept := make([]metav1.ManagedFieldsEntry, 0, len(mfs))
		for _, mf := range mfs {
			kept = append(kept, metav1.ManagedFieldsEntry{Manager: mf.Manager, Operation: mf.Operation, Subresource: mf.Subresource})
		}
		obj.SetManagedFields(kept)
		return in, nil
	}
}
