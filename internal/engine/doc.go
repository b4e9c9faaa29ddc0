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

// Package engine reads what database operators report about the account
// Secrets they consume: CloudNativePG's Cluster (managed roles) and
// mariadb-operator's User. Their Go API modules cannot be fetched here, so
// each kind is a small struct of only the fields credo reads, decoded from
// the unstructured object; the comment on each names the CRD fields and
// the operator versions they come from. Unknown fields are ignored.
package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is an operator's kind credo observes.
type Kind struct {
	// GVK is its group, version and kind.
	GVK schema.GroupVersionKind
	// Engine names the operator, for messages and logs.
	Engine string
}

// Kinds are the operator kinds credo observes, when their CRDs are installed.
var Kinds = []Kind{
	{GVK: ClusterGVK, Engine: "CloudNativePG"},
	{GVK: UserGVK, Engine: "mariadb-operator"},
}

// New returns an empty unstructured object of the kind, for a watch or a Get.
func (k Kind) New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	return u
}

// NewList returns an empty unstructured list of the kind.
func (k Kind) NewList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
	return l
}

// decode fills out from the unstructured object u.
func decode(u *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
