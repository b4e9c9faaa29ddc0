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

package accessapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// InternalGroupVersion is the internal version of access.credo.dev. The
// generic API server decodes requests into it; it is the very same Go types
// as v1alpha1, so converting between the two only sets the kind.
var InternalGroupVersion = schema.GroupVersion{Group: accessv1.GroupVersion.Group, Version: runtime.APIVersionInternal}

// NewScheme returns a scheme with access.credo.dev at v1alpha1 and at the
// internal version, and the unversioned meta types the server answers with.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(accessv1.AddToScheme(s))
	s.AddKnownTypes(InternalGroupVersion, &accessv1.Mint{}, &accessv1.Revocation{}, &accessv1.JoinTokenRequest{},
		&accessv1.Account{}, &accessv1.AccountList{})
	utilruntime.Must(s.SetVersionPriority(accessv1.GroupVersion))
	// The meta types (CreateOptions, Status, ...) as every API server registers them.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	s.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{},
		&metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}

// Scheme is the scheme the server uses.
var Scheme = NewScheme()

// Codecs serialize Scheme's types.
var Codecs = serializer.NewCodecFactory(Scheme)
