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

// Package enrollment holds the enrollment-controller's reconcilers:
// EnrollmentPolicy, which counts a policy's tokens and workloads against
// the platform's limits, and Workload, which tracks a workload's
// certificate and collects pending ones. Setup builds them for
// cmd/enrollment-controller and the tests alike; the RBAC markers here,
// with internal/enrollment's and internal/ca's, generate the
// enrollment-controller's own ClusterRole, and the Role of its namespace
// where the embedded CA keeps its Secret (make manifests).
//
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
package enrollment
