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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
)

// desired is the projection of bundle for owner: the one description of
// the object that create, apply and replace all write.
func (w *Writer) desired(namespace string, owner Owner, bundle *pem.Bundle) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            trustv1.ProjectionName(owner.Release),
			Namespace:       namespace,
			Labels:          map[string]string{w.TenantCALabel: "true"},
			Annotations:     map[string]string{DigestAnnotation: digest(bundle)},
			OwnerReferences: []metav1.OwnerReference{owner.Ref},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{trustv1.ProjectionKey: bundle.PEM},
	}
}

// metadataCurrent reports whether the label, the digest and the owner
// reference to owner are as they should be, with no stale owner reference
// beside it. (A Secret's type cannot change.)
func (w *Writer) metadataCurrent(s metav1.Object, digest string, owner ownerID) bool {
	if s.GetLabels()[w.TenantCALabel] != "true" || s.GetAnnotations()[DigestAnnotation] != digest || staleOwner(s, owner) {
		return false
	}
	for _, ref := range s.GetOwnerReferences() {
		if ref.UID == owner.uid && ref.Kind == owner.kind && ref.BlockOwnerDeletion != nil && !*ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}
