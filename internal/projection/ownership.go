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
	"github.com/fluxcd/pkg/ssa"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managers are the managedFields entries credo's writes leave on a
// projection: an update entry from create and replace, an apply entry from
// apply, both under FieldOwner.
func (w *Writer) managers() []ssa.FieldManager {
	return []ssa.FieldManager{
		{Name: w.FieldOwner, ExactMatch: true, OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: w.FieldOwner, ExactMatch: true, OperationType: metav1.ManagedFieldsOperationApply},
	}
}

// owns reports whether the Secret was written by this writer's field owner:
// whether one of its managedFields entries matches managers under ssa's rule
// (exact name, operation, main resource). ssa exports that rule only through
// its managedFields patches, which are empty exactly when no entry matches.
// A writer without a field owner owns nothing.
func (w *Writer) owns(s *corev1.Secret) bool {
	if w.FieldOwner == "" {
		return false
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetManagedFields(s.ManagedFields)
	return len(ssa.PatchRemoveFieldsManagers(u, w.managers())) > 0
}
