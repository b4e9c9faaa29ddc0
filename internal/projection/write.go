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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/pem"
)

// create creates the projection. Create, not apply, so that a foreign Secret
// created since the read makes it fail with AlreadyExists instead of merging.
func (w *Writer) create(ctx context.Context, desired *corev1.Secret, bundle *pem.Bundle) (*Result, error) {
	w.expect(desired)
	created := desired.DeepCopy()
	if err := fieldowner.Create(ctx, w.Client, created, w.FieldOwner); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, ErrCollision
		}
		return nil, fmt.Errorf("creating Secret %s: %w", desired.Name, err)
	}
	w.answered(desired, created.ResourceVersion)
	return &Result{Bundle: bundle, Changed: true}, nil
}

// apply server-side applies desired over the projection of ours at
// resourceVersion, holding ca.crt alone. The resourceVersion precondition
// makes the apply fail with a conflict, rather than write, if the Secret was
// changed or replaced by a foreign one since it was read.
func (w *Writer) apply(ctx context.Context, resourceVersion string, desired *corev1.Secret, bundle *pem.Bundle, changed bool) (*Result, error) {
	w.expect(desired)
	stored, err := fieldowner.ApplyOver(ctx, w.Client, desired, resourceVersion, w.FieldOwner)
	if err != nil {
		return nil, fmt.Errorf("applying Secret %s: %w", desired.Name, err)
	}
	w.answered(desired, stored.ResourceVersion)
	return &Result{Bundle: bundle, Changed: changed}, nil
}

// replace overwrites a projection of ours whose data holds more than
// ca.crt, or which has a former owner, with the resourceVersion read as
// the precondition.
func (w *Writer) replace(ctx context.Context, current, desired *corev1.Secret, bundle *pem.Bundle, changed bool) (*Result, error) {
	next := current.DeepCopy()
	next.Data, next.StringData, next.Type = desired.Data, nil, desired.Type
	next.OwnerReferences = desired.OwnerReferences
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	next.Labels[w.TenantCALabel] = "true"
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[DigestAnnotation] = desired.Annotations[DigestAnnotation]
	w.expect(desired)
	if err := w.Client.Update(ctx, next, client.FieldOwner(w.FieldOwner)); err != nil {
		return nil, fmt.Errorf("replacing Secret %s: %w", current.Name, err)
	}
	w.answered(desired, next.ResourceVersion)
	return &Result{Bundle: bundle, Changed: changed}, nil
}

// expect records desired's digest in Echoes before it is written: its watch
// event may come before the response.
func (w *Writer) expect(desired *corev1.Secret) {
	w.Echoes.expect(client.ObjectKeyFromObject(desired), written{
		digest: desired.Annotations[DigestAnnotation], owner: ownerOf(desired),
	})
}

// answered records the resourceVersion desired was stored at, by the
// response to its write or by an uncached read that found it current.
func (w *Writer) answered(desired *corev1.Secret, version string) {
	w.Echoes.answered(client.ObjectKeyFromObject(desired), written{
		digest: desired.Annotations[DigestAnnotation], owner: ownerOf(desired), version: version,
	})
}
