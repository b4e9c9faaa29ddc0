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

// Package credentials holds the credential-controller's reconcilers:
// CredentialAccount, which keeps an account's Secret (a verifier) and
// delivers it to the release, and AccountSource, which derives accounts
// from release values. Setup builds them for cmd/credential-controller and
// the tests alike; the RBAC markers here, with internal/account's (the
// writer of account Secrets) and internal/accessapi's, generate the
// credential-controller's own ClusterRole (make manifests).
//
// Secrets: the reconcilers watch them as metadata only and read them
// uncached; every write goes through internal/account.
//
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
package credentials
