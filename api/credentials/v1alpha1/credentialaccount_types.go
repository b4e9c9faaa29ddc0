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
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// CredentialAccountKind is the kind of a CredentialAccount.
	CredentialAccountKind = "CredentialAccount"

	// AccountSecretSuffix ends every account Secret's name:
	// <release>.<dns(username)>.account.
	AccountSecretSuffix = ".account"

	// UsernameKey and PasswordKey are the keys of an account Secret.
	UsernameKey = "username"
	PasswordKey = "password"

	defaultAccountInterval = time.Hour
)

// FormatKind says where a format's verifier is computed.
// +kubebuilder:validation:Enum=BuiltIn;Webhook
type FormatKind string

const (
	// FormatBuiltIn: computed by credo (scram-sha-256, mysql-native, sha256-hex, plaintext).
	FormatBuiltIn FormatKind = "BuiltIn"
	// FormatWebhook: computed by an external webhook. Not built yet: refused.
	FormatWebhook FormatKind = "Webhook"
)

// AccountOwner says who holds the password of an account.
// +kubebuilder:validation:Enum=tenant;platform
type AccountOwner string

const (
	// OwnerTenant: the tenant mints the password through the access API.
	OwnerTenant AccountOwner = "tenant"
	// OwnerPlatform: credo generates and keeps the password; tenants can never mint it.
	OwnerPlatform AccountOwner = "platform"
)

// Origin is the provenance of an account Secret's password, in its origin annotation.
type Origin string

const (
	// OriginNotIssued: the verifier of a random value nobody keeps; nobody can log in.
	OriginNotIssued Origin = "NotIssued"
	// OriginMigrated: a verifier carried over from an earlier system.
	OriginMigrated Origin = "Migrated"
	// OriginMinted: the verifier of a password returned once by a mint.
	OriginMinted Origin = "Minted"
	// OriginRevoked: replaced by the verifier of a value nobody keeps.
	OriginRevoked Origin = "Revoked"
	// OriginGenerated: a platform account's password, generated and kept by credo.
	OriginGenerated Origin = "Generated"
)

// Format names how the password is stored.
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || self.kind != 'Webhook' || has(self.webhook)",message="webhook is required for kind Webhook"
type Format struct {
	// name of the format: for BuiltIn one of scram-sha-256, mysql-native,
	// sha256-hex, plaintext.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// kind says where the verifier is computed. Defaults to BuiltIn.
	// +kubebuilder:default=BuiltIn
	// +optional
	Kind FormatKind `json:"kind,omitempty"`

	// webhook computes the verifier for kind Webhook, and is required with
	// it. Part of the API, not built yet: an account using it is refused
	// with a condition.
	// +optional
	Webhook *WebhookFormat `json:"webhook,omitempty"`
}

// WebhookFormat is an external service computing the stored value.
type WebhookFormat struct {
	// clientConfig says how to reach the webhook.
	// +required
	ClientConfig WebhookClientConfig `json:"clientConfig"`

	// timeoutSeconds bounds a call. Defaults to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// ValuesFromTarget delivers the account Secret's password into the release's
// values through HelmRelease spec.valuesFrom, for engines whose operator
// watches no Secret (ClickHouse).
type ValuesFromTarget struct {
	// targetPath is the values path the verifier is written to, e.g.
	// users.app.password_sha256_hex.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=250
	// +required
	TargetPath string `json:"targetPath"`
}

// PlaintextDelivery names who consumes a platform account's plaintext: an
// operator that reads the password by key (mariadb-operator's
// rootPasswordSecretKeyRef), a CronJob's ServiceAccount. The account
// Secret holds the plaintext in the account's namespace; before it is
// written, and before each rotation, the credential-controller checks by
// SubjectAccessReviews that nobody bound in that namespace or cluster-wide,
// other than these consumers and the platform's trusted identities
// (--plaintext-trusted-subjects), may read it, start a pod there or exec
// into one, nor write the Secret of secretRef (PlaintextExposed otherwise,
// and nothing is written).
type PlaintextDelivery struct {
	// consumers are the ServiceAccounts that read the plaintext through the
	// API; a pod that mounts it by secretKeyRef needs no entry.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Consumers []ServiceAccountRef `json:"consumers,omitempty"`

	// secretRef names the key, in a Secret of the account's namespace,
	// that a running consumer already reads and cannot be pointed away
	// from: an existing MariaDB's rootPasswordSecretKeyRef (immutable once
	// set) naming the chart-rendered <release>-credentials. Once `kubectl
	// credo migrate` has adopted that Secret (after the chart stopped
	// rendering it), the credential-controller writes the account's
	// plaintext into that key too, on every rotation and repair; until
	// then the account waits (PlaintextSecretNotAdopted) and the key is
	// left as it is. Its other keys are never read or written. The
	// exposure check then covers that Secret as well, writes included:
	// no admission policy guards its name. Set once (it may be added to
	// an account that has none), then never changed or removed.
	// +optional
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`
}

// SecretKeyRef names one key of a Secret in the account's namespace.
type SecretKeyRef struct {
	// name of the Secret. Not an account Secret or a trust anchor's
	// projection, which credo writes under their own rules.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="!self.endsWith('.account') && !self.endsWith('.tenant-ca')",message="secretRef may not name an account Secret or a trust anchor's projection"
	// +required
	Name string `json:"name"`

	// key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// ServiceAccountRef names a ServiceAccount.
type ServiceAccountRef struct {
	// namespace of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Namespace string `json:"namespace"`

	// name of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// CredentialAccountSpec declares one account of one release.
// +kubebuilder:validation:XValidation:rule="!has(self.plaintext) || (has(self.owner) && self.owner == 'platform' && self.format.name == 'plaintext')",message="plaintext is for a platform account of format plaintext"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.plaintext) || !has(oldSelf.plaintext.secretRef) || (has(self.plaintext) && has(self.plaintext.secretRef) && self.plaintext.secretRef == oldSelf.plaintext.secretRef)",message="plaintext.secretRef is set once and never changes, as the consumer's own reference to it"
// +kubebuilder:validation:XValidation:rule="self.release == oldSelf.release",message="release is immutable"
// +kubebuilder:validation:XValidation:rule="self.username == oldSelf.username",message="username is immutable"
type CredentialAccountSpec struct {
	// release is the HelmRelease, in the account's namespace, the account
	// belongs to. The account Secret is owned by it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Release string `json:"release"`

	// username is the account's name as the engine knows it, stored as is.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	Username string `json:"username"`

	// format says how the password is stored. Immutable: the stored
	// verifier is only valid for the format it was computed in.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="format is immutable; delete and recreate the account to change it"
	// +required
	Format Format `json:"format"`

	// owner says who holds the password. Defaults to tenant. Immutable: an
	// account never passes between the platform and a tenant.
	// +kubebuilder:default=tenant
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="owner is immutable; delete and recreate the account to change it"
	// +optional
	Owner AccountOwner `json:"owner,omitempty"`

	// secretLabels are extra labels the engine's operator needs on the
	// account Secret, e.g. cnpg.io/reload or k8s.mariadb.com/watch.
	// Credo's contract labels are refused: on a Secret credo writes
	// they would read as credo's own statement.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.endsWith('/publish-ca-cert') && !k.endsWith('/publish-ca-cert-release') && !k.endsWith('/tenant-ca') && !k.endsWith('/account'))",message="secretLabels may not carry credo's contract labels (publish-ca-cert, publish-ca-cert-release, tenant-ca, account): credo would write them as its own"
	// +optional
	SecretLabels map[string]string `json:"secretLabels,omitempty"`

	// valuesFrom delivers the password to the release through its
	// spec.valuesFrom, for engines whose operator watches no Secret.
	// +optional
	ValuesFrom *ValuesFromTarget `json:"valuesFrom,omitempty"`

	// plaintext is required for a platform account of format plaintext,
	// whose consumer needs the password itself (MariaDB's root): it names
	// the consumers, and the account Secret is written only where no
	// tenant may read it.
	// +optional
	Plaintext *PlaintextDelivery `json:"plaintext,omitempty"`

	// rotate requests, for a platform account, a new password whenever its
	// value changes (like reconcile.fluxcd.io/requestedAt, but in Git).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Rotate string `json:"rotate,omitempty"`

	// interval at which the account is re-checked without a change.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:default="1h"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// suspend stops the account from being reconciled.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// Operation is one entry of an account's history. It never holds a password.
type Operation struct {
	// operation is what happened: the origin it left (NotIssued, Minted,
	// Revoked, Generated, Migrated).
	// +kubebuilder:validation:MaxLength=32
	// +required
	Operation Origin `json:"operation"`

	// at is when.
	// +required
	At metav1.Time `json:"at"`

	// by is who, as the API server authenticated them, or the controller.
	// +kubebuilder:validation:MaxLength=512
	// +required
	By string `json:"by"`
}

// AppliedRequest is a reconcile credo requested of a HelmRelease, through
// its reconcile.fluxcd.io/requestedAt annotation, after the account
// Secret changed.
type AppliedRequest struct {
	// token is the annotation's value: credo: and the time of the request.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Token string `json:"token"`

	// secretResourceVersion is the account Secret's resourceVersion the
	// request was made for.
	// +kubebuilder:validation:MaxLength=64
	// +required
	SecretResourceVersion string `json:"secretResourceVersion"`
}

// CredentialAccountStatus reports the account. It never holds a password or verifier.
type CredentialAccountStatus struct {
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling, Stalled, the negative-polarity
	// conditions of condition_types.go, and Applied (positive polarity,
	// not part of Ready).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// secretName is the account Secret.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// origin of the current password.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Origin Origin `json:"origin,omitempty"`

	// lastChange is when the password last changed.
	// +optional
	LastChange *metav1.Time `json:"lastChange,omitempty"`

	// history holds the last operations, newest last.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	History []Operation `json:"history,omitempty"`

	// lastHandledRotate is the spec.rotate value last acted on.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	LastHandledRotate string `json:"lastHandledRotate,omitempty"`

	// appliedChange is the last change of the password (lastChange) the
	// Applied condition was True for: the engine is known to use the
	// password of that change.
	// +optional
	AppliedChange *metav1.Time `json:"appliedChange,omitempty"`

	// appliedRequest is the reconcile credo last requested of the release
	// of an account delivered through valuesFrom, and the account Secret's
	// resourceVersion it was requested for.
	// +optional
	AppliedRequest *AppliedRequest `json:"appliedRequest,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cacct,categories=credo-all;credentials
// +kubebuilder:printcolumn:name="Release",type=string,JSONPath=`.spec.release`
// +kubebuilder:printcolumn:name="Username",type=string,JSONPath=`.spec.username`
// +kubebuilder:printcolumn:name="Format",type=string,JSONPath=`.spec.format.name`,priority=1
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner`
// +kubebuilder:printcolumn:name="Origin",type=string,JSONPath=`.status.origin`
// +kubebuilder:printcolumn:name="Last Change",type=date,JSONPath=`.status.lastChange`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`,priority=1
// +kubebuilder:printcolumn:name="Applied Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].reason`,priority=1

// CredentialAccount declares one database or service account of one
// release. credo keeps its Secret holding only what the engine needs.
type CredentialAccount struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares one account of one release.
	// +required
	Spec CredentialAccountSpec `json:"spec"`

	// status reports the account. It never holds a password or verifier.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status CredentialAccountStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *CredentialAccount) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *CredentialAccount) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetInterval returns the re-check interval, one hour by default.
func (in *CredentialAccount) GetInterval() time.Duration {
	if in.Spec.Interval == nil || in.Spec.Interval.Duration <= 0 {
		return defaultAccountInterval
	}
	return in.Spec.Interval.Duration
}

// GetRequeueAfter returns the interval, for the Flux runtime.
func (in *CredentialAccount) GetRequeueAfter() time.Duration { return in.GetInterval() }

// GetOwner returns the owner, tenant by default.
func (in *CredentialAccount) GetOwner() AccountOwner {
	if in.Spec.Owner == "" {
		return OwnerTenant
	}
	return in.Spec.Owner
}

// GetFormatKind returns the format kind, BuiltIn by default.
func (in *CredentialAccount) GetFormatKind() FormatKind {
	if in.Spec.Format.Kind == "" {
		return FormatBuiltIn
	}
	return in.Spec.Format.Kind
}

// +kubebuilder:object:root=true

// CredentialAccountList is a list of CredentialAccounts.
type CredentialAccountList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CredentialAccount `json:"items"`
}
