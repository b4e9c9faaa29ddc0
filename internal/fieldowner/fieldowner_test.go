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

package fieldowner

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWrote(t *testing.T) {
	const credo = "credo-trust-controller"
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, APIVersion: "v1"}
	}
	for _, tc := range []struct {
		name    string
		manager string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"no managed fields", credo, nil, false},
		{"another manager", credo, []metav1.ManagedFieldsEntry{entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "")}, false},
		{"a name that only starts with credo's", credo, []metav1.ManagedFieldsEntry{entry(credo+"-impostor", metav1.ManagedFieldsOperationApply, "")}, false},
		{"created by credo", credo, []metav1.ManagedFieldsEntry{entry(credo, metav1.ManagedFieldsOperationUpdate, "")}, true},
		{"applied by credo among others", credo, []metav1.ManagedFieldsEntry{
			entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, ""), entry(credo, metav1.ManagedFieldsOperationApply, "")}, true},
		{"credo on a subresource only", credo, []metav1.ManagedFieldsEntry{entry(credo, metav1.ManagedFieldsOperationUpdate, "status")}, false},
		{"an empty manager", "", []metav1.ManagedFieldsEntry{entry("", metav1.ManagedFieldsOperationUpdate, "")}, false},
	} {
		obj := &metav1.ObjectMeta{ManagedFields: tc.entries}
		if got := Wrote(obj, tc.manager); got != tc.want {
			t.Errorf("%s: Wrote = %v, want %v", tc.name, got, tc.want)
		}
	}
}
