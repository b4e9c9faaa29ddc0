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

// AccountSpec is what the CredentialAccount declares.
type AccountSpec struct {
	// release is the HelmRelease the account belongs to.
	Release string `json:"release"`
	// username is the account's username in the engine.
	Username string `json:"username"`
	// owner is who holds the password: tenant (minted through this API) or
	// platform (generated and kept by credo; never minted by a tenant).
	Owner string `json:"owner"`
	// format is the name of the format the password is stored in
	// (scram-sha-256, mysql-native, sha256-hex, plaintext).
	Format string `json:"format"`
	// formatKind is where the verifier is computed: BuiltIn or Webhook.
	FormatKind string `json:"formatKind"`
	// suspend is the CredentialAccount's spec.suspend: while set, the
	// controller does not reconcile the account.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// AccountOperation is one entry of an account's history. It never holds a password.
type AccountOperation struct {
	// operation is the origin it left: NotIssued, Minted, Revoked, Generated, Migrated.
	Operation string `json:"operation"`
	// at is when.
	At metav1.Time `json:"at"`
	// by is who, as kube-apiserver authenticated them, or the controller.
	By string `json:"by"`
}

// AccountStatus is the account Secret as a tenant may see it: its name,
// version and record, never its password field.
type AccountStatus struct {
	// secretName is the account Secret.
	SecretName string `json:"secretName"`
	// secretResourceVersion is the account Secret's current resourceVersion,
	// empty while the Secret does not exist. Pass it as a Mint's or
	// Revocation's spec.resourceVersion to act only if nobody changed the
	// account since.
	// +optional
	SecretResourceVersion string `json:"secretResourceVersion,omitempty"`
	// origin of the current password: NotIssued, Migrated, Minted, Revoked or Generated.
	// +optional
	Origin string `json:"origin,omitempty"`
	// lastChange is when the password last changed.
	// +optional
	LastChange *metav1.Time `json:"lastChange,omitempty"`
	// history holds the last operations, newest last.
	// +optional
	History []AccountOperation `json:"history,omitempty"`
	// applied is the CredentialAccount's Applied condition: whether the
	// engine is known to use the current password.
	// +optional
	Applied *AccountApplied `json:"applied,omitempty"`
	// ready is the CredentialAccount's Ready condition: whether its Secret
	// is in place and delivered, and if not, why.
	// +optional
	Ready *AccountReady `json:"ready,omitempty"`
}

// AccountReady is the CredentialAccount's Ready condition.
type AccountReady struct {
	// status is True, False or Unknown.
	Status string `json:"status"`
	// reason is the condition's reason, e.g. Succeeded, ReleaseSuspended.
	Reason string `json:"reason"`
	// message says what is in place, or what is wrong and what to do.
	// +optional
	Message string `json:"message,omitempty"`
}

// AccountApplied says whether the engine is known to use the account's
// current password: the CredentialAccount's Applied condition.
type AccountApplied struct {
	// status is True, False or Unknown.
	Status string `json:"status"`
	// reason is the condition's reason, e.g. ReleaseReconciled, RolePending,
	// EngineNotObserved.
	Reason string `json:"reason"`
	// message names the consumers and the change of the password it reflects.
	// +optional
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true

// Account is a read-only view of a CredentialAccount and its Secret, for
// tenants who may not read the Secret. Its subresources mint and revocation
// act on it: POST .../accounts/<name>/mint names the account in the URL,
// and so in kube-apiserver's audit log.
type Account struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Account.
	Spec AccountSpec `json:"spec"`
	// status is the account Secret as the tenant may see it.
	Status AccountStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AccountList is a list of Accounts.
type AccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Account `json:"items"`
}
