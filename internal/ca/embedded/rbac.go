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

package embedded

// The embedded CA keeps its key and certificate in a Secret of the
// controller's namespace (Options.Namespace, credo-system as config/
// installs it) and records events on it: a Role of that namespace, never a
// ClusterRole, so the enrollment-controller reads no Secret elsewhere. An
// overlay's namespace transformer moves the Role with the controller.
// +kubebuilder:rbac:groups="",namespace=credo-system,resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=credo-system,resources=events,verbs=create;patch
//
// It declares the CA's TrustAnchor in the same namespace (Anchor): create
// and patch (server-side apply) it, get and list to tell its own from any
// other, delete the ones it declared under another release name.
// +kubebuilder:rbac:groups=trust.credo.dev,namespace=credo-system,resources=trustanchors,verbs=get;list;create;patch;delete
