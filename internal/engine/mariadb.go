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

package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// UserGVK is mariadb-operator's User.
var UserGVK = schema.GroupVersionKind{Group: "k8s.mariadb.com", Version: "v1alpha1", Kind: "User"}

// User holds the fields credo reads of a mariadb-operator User
// (k8s.mariadb.com/v1alpha1, as of mariadb-operator 26.6: api/v1alpha1
// user_types.go, CRD config/crd/bases/k8s.mariadb.com_users.yaml):
// spec.passwordSecretKeyRef.name, spec.passwordHashSecretKeyRef.name and
// status.conditions. The operator reports no version of the Secret it
// applied; its Ready condition's lastTransitionTime moves only when Ready
// changes status.
type User struct {
	Spec struct {
		PasswordSecretKeyRef     *SecretKeyRef `json:"passwordSecretKeyRef,omitempty"`
		PasswordHashSecretKeyRef *SecretKeyRef `json:"passwordHashSecretKeyRef,omitempty"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
	} `json:"status"`
}

// SecretKeyRef names a key of a Secret in the User's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// DecodeUser reads the fields credo needs from an unstructured User.
func DecodeUser(u *unstructured.Unstructured) (*User, error) {
	out := &User{}
	return out, decode(u, out)
}

// SecretNames returns the Secrets the User's password comes from.
func (u *User) SecretNames() []string {
	var names []string
	for _, ref := range []*SecretKeyRef{u.Spec.PasswordHashSecretKeyRef, u.Spec.PasswordSecretKeyRef} {
		if ref != nil && ref.Name != "" {
			names = append(names, ref.Name)
		}
	}
	return names
}

// Uses reports whether the User's password comes from the Secret named secret.
func (u *User) Uses(secret string) bool {
	for _, n := range u.SecretNames() {
		if n == secret {
			return true
		}
	}
	return false
}
