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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AccountRequestSpec names the account a Mint or Revocation acts on.
type AccountRequestSpec struct {
	// account is the name of a CredentialAccount in the request's namespace.
	// +required
	Account string `json:"account"`

	// resourceVersion is, when set, the account Secret's resourceVersion the
	// caller expects: the request fails with 409 Conflict if the Secret
	// changed since. Without it, the version read by the server is used, so
	// of two concurrent requests one may still lose with 409.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// MintStatus is the response to a Mint. The password is in it once, and
// nowhere else.
type MintStatus struct {
	// username of the account.
	Username string `json:"username"`
	// password is the new password, in plaintext. It is not stored anywhere
	// by credo (for verifier formats); a lost response is answered by another mint.
	Password string `json:"password"`
	// secretName is the account Secret that now holds its verifier.
	SecretName string `json:"secretName"`
	// resourceVersion is the account Secret's version after the write.
	ResourceVersion string `json:"resourceVersion"`
	// mintedAt is when.
	MintedAt metav1.Time `json:"mintedAt"`
}

// +kubebuilder:object:root=true

// Mint generates a new password for a tenant-owned CredentialAccount,
// stores only its verifier, and returns the password once. Create-only.
type Mint struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the request.
	Spec AccountRequestSpec `json:"spec"`
	// status is the response, filled in by the server.
	Status MintStatus `json:"status,omitempty"`
}

// RevocationStatus is the response to a Revocation.
type RevocationStatus struct {
	// secretName is the account Secret whose password was replaced.
	SecretName string `json:"secretName"`
	// resourceVersion is the account Secret's version after the write.
	ResourceVersion string `json:"resourceVersion"`
	// revokedAt is when.
	RevokedAt metav1.Time `json:"revokedAt"`
}

// +kubebuilder:object:root=true

// Revocation replaces a CredentialAccount's password by the verifier of a
// value nobody keeps: nobody can log in until the next mint. Create-only.
type Revocation struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the request.
	Spec AccountRequestSpec `json:"spec"`
	// status is the response, filled in by the server.
	Status RevocationStatus `json:"status,omitempty"`
}

// JoinTokenRequestSpec asks for a join token of an EnrollmentPolicy.
type JoinTokenRequestSpec struct {
	// policy is an EnrollmentPolicy in the request's namespace.
	// +required
	Policy string `json:"policy"`

	// lifetime of the token; at most, and by default, the policy's tokenLifetime.
	// +optional
	Lifetime *metav1.Duration `json:"lifetime,omitempty"`

	// description is recorded in the JoinToken.
	// +optional
	Description string `json:"description,omitempty"`
}

// JoinTokenRequestStatus is the response: the token, once.
type JoinTokenRequestStatus struct {
	// token is "<id>.<secret>". Only a hash of the secret is stored; a lost
	// token is answered by another request (and the revocation of this one).
	Token string `json:"token"`
	// id is the token's id: the name of its JoinToken record.
	ID string `json:"id"`
	// expiresAt is when the token stops enrolling.
	ExpiresAt metav1.Time `json:"expiresAt"`
}

// +kubebuilder:object:root=true

// JoinTokenRequest mints a join token from an EnrollmentPolicy and returns
// it once. Create-only.
type JoinTokenRequest struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the request.
	Spec JoinTokenRequestSpec `json:"spec"`
	// status is the response, filled in by the server.
	Status JoinTokenRequestStatus `json:"status,omitempty"`
}
