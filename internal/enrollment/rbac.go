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

package enrollment

// The enrollment server registers Workloads, records their certificates
// (and denies a Workload whose policy denies duplicate identities) and
// the uses of join tokens, and reads policies and tokens from its cache.
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=workloads,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=workloads/status,verbs=get;update
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=jointokens,verbs=get;list;watch
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=jointokens/status,verbs=get;update
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies,verbs=get;list;watch

// Lookups ask kube-apiserver who a caller presenting a Kubernetes token is,
// and whether a caller may look up a workload.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
