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

// Package fieldowner answers the question both of credo's writers ask
// before they touch an object: did credo write it? The answer is in the
// object's managedFields, which only the API server writes: a Secret a
// tenant created carries the tenant's manager, whatever its labels say.
package fieldowner

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Wrote reports whether manager wrote obj: one of its managedFields
// entries on the main resource (not a subresource) is manager's, by exact
// name, from an update or an apply. An empty manager wrote nothing.
func Wrote(obj metav1.Object, manager string) bool {
	if manager == "" {
		return false
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.Subresource == "" &&
			(mf.Operation == metav1.ManagedFieldsOperationUpdate || mf.Operation == metav1.ManagedFieldsOperationApply) {
			return true
		}
	}
	return false
}
