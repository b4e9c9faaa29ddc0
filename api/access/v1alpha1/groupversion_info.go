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

// Package v1alpha1 contains the aggregated API of access.credo.dev: create-only
// kinds, like TokenRequest, that mint and revoke account passwords. Nothing
// of them is persisted.
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=access.credo.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of the access.credo.dev API.
var GroupVersion = schema.GroupVersion{Group: "access.credo.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the access.credo.dev types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the access.credo.dev types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Mint{}, &Revocation{}, &JoinTokenRequest{}, &Account{}, &AccountList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
