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

package account

// The writer reads an account Secret or kept password uncached, creates it,
// applies it (patch), updates it (metadata another manager set, a reclaim)
// and deletes it (a finalized account, a replaced Secret, a kept password).
// It runs in the credential-controller, for its reconcilers and its access
// API alike, and in no other binary.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update;patch;delete
