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

package v1alpha1

// Metadata keys of the events credo records on a CredentialAccount. Each
// starts with the API group: notification-controller forwards such a key
// with the prefix stripped ("release", "username", ...), and drops keys of
// other groups. None ever holds a password or a verifier.
const (
	// EventReleaseKey is the HelmRelease the account belongs to.
	EventReleaseKey = "credentials.credo.dev/release"
	// EventUsernameKey is the account's username.
	EventUsernameKey = "credentials.credo.dev/username"
	// EventSecretKey is the account Secret.
	EventSecretKey = "credentials.credo.dev/secret"
	// EventOwnerKey is who holds the password: tenant or platform.
	EventOwnerKey = "credentials.credo.dev/owner"
	// EventRequesterKey is the user a refused mint or revocation came from,
	// as kube-apiserver authenticated them.
	EventRequesterKey = "credentials.credo.dev/requester"
)

// Reasons of events recorded by the access API (Warning).
const (
	// MintRefusedReason: a mint or revocation of the account was refused
	// because the platform owns its password.
	MintRefusedReason string = "MintRefused"
)
