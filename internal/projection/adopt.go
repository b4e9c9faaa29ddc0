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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
)

// Adoption is how a Writer treats a projection another controller claims
// by an owner reference of its kind (the platform's TenantProjection
// controller): never written, unless Allowed says it may be taken over
// now; then it is taken over in place (adopt).
type Adoption struct {
	// Claims reports whether s is the other controller's projection.
	Claims func(s metav1.Object) bool
	// Allowed reports whether the claimed projection s may be taken over
	// now. Nil or false leaves it: ErrCollision.
	Allowed func(ctx context.Context, s *corev1.Secret) bool
	// Marks are the labels and annotations of the other controller that a
	// takeover removes: left, they would tell its readers it is theirs.
	Marks []string
}

// claimed reports whether s is claimed by the other controller.
func (a *Adoption) claimed(s metav1.Object) bool {
	return a != nil && a.Claims != nil && a.Claims(s)
}

// adopt takes over the claimed projection current: one update under its
// resourceVersion, so the Secret (its UID) stays; data, type and owner
// references become the desired ones, the other controller's marks go, and
// the bytes are unchanged unless the source changed.
func (w *Writer) adopt(ctx context.Context, current, desired *corev1.Secret, bundle *pem.Bundle, changed bool) (*Result, error) {
	if w.Adopt.Allowed == nil || !w.Adopt.Allowed(ctx, current) {
		return nil, ErrCollision
	}
	marked := current.DeepCopy()
	for _, k := range w.Adopt.Marks {
		delete(marked.Labels, k)
		delete(marked.Annotations, k)
	}
	r, err := w.replace(ctx, marked, desired, bundle, changed)
	if err != nil {
		return nil, err
	}
	r.Adopted = true
	return r, nil
}

// HandOver gives the projection of release in namespace, if this writer
// wrote it and no other controller claims it yet, to the controller whose
// owner reference is ref: one update under its resourceVersion that makes
// ref its only owner reference, so that controller takes it for its own
// and keeps the Secret (its UID) and bytes. The data and marks stay as
// they are; that controller adds its own. It reports whether it wrote.
func (w *Writer) HandOver(ctx context.Context, namespace, release string, ref metav1.OwnerReference) (bool, error) {
	var current corev1.Secret
	key := client.ObjectKey{Namespace: namespace, Name: trustv1.ProjectionName(release)}
	if err := w.Reader.Get(ctx, key, &current); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if w.Adopt.claimed(&current) || !w.owns(&current) {
		return false, nil
	}
	current.OwnerReferences = []metav1.OwnerReference{ref}
	if err := w.Client.Update(ctx, &current, client.FieldOwner(w.FieldOwner)); err != nil {
		return false, fmt.Errorf("handing Secret %s over: %w", current.Name, err)
	}
	// Its events are another controller's business from now on.
	w.Echoes.forget(key)
	return true, nil
}
