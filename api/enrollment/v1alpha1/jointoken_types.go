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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// JoinTokenKind is the kind of a JoinToken.
	JoinTokenKind = "JoinToken"
)

// JoinTokenSpec is the record of a join token. It holds a hash of the
// token's secret part, never the secret. Written by the access API when a
// JoinTokenRequest is created; tenants revoke it by setting revoked.
// +kubebuilder:validation:XValidation:rule="self.policy == oldSelf.policy",message="policy is immutable"
// +kubebuilder:validation:XValidation:rule="self.secretHash == oldSelf.secretHash",message="secretHash is immutable"
// +kubebuilder:validation:XValidation:rule="self.expiresAt == oldSelf.expiresAt",message="expiresAt is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.revoked) || !oldSelf.revoked || (has(self.revoked) && self.revoked)",message="a revoked token cannot be reinstated"
type JoinTokenSpec struct {
	// policy is the EnrollmentPolicy, in the token's namespace, it enrolls under.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Policy string `json:"policy"`

	// secretHash is "sha256:<hex>" of the token's secret part.
	// +kubebuilder:validation:Pattern="^sha256:[0-9a-f]{64}$"
	// +kubebuilder:validation:MaxLength=71
	// +required
	SecretHash string `json:"secretHash"`

	// expiresAt is when the token stops enrolling.
	// +required
	ExpiresAt metav1.Time `json:"expiresAt"`

	// revoked stops the token: it enrolls nothing further. Workloads it
	// enrolled keep renewing.
	// +optional
	Revoked bool `json:"revoked,omitempty"`

	// createdBy is the user that requested the token, as kube-apiserver
	// authenticated them.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	CreatedBy string `json:"createdBy,omitempty"`

	// description is free text given at creation.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Description string `json:"description,omitempty"`
}

// JoinTokenStatus records the token's uses and whether it can enroll.
type JoinTokenStatus struct {
	// conditions hold Ready: True while the token can enroll, False once
	// it is revoked, expired or its policy is revoked. Written by the
	// enrollment-controller; the enrollment server judges a token by its
	// spec, not by this condition.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// uses is the number of workloads enrolled with the token.
	// +kubebuilder:default=0
	// +optional
	Uses int64 `json:"uses"`

	// lastUsedAt is when the token last enrolled a workload.
	// +optional
	LastUsedAt *metav1.Time `json:"lastUsedAt,omitempty"`

	// lastWorkload is the UUID of the workload the token last enrolled.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	LastWorkload string `json:"lastWorkload,omitempty"`
}

// GetConditions returns the token's conditions.
func (in *JoinToken) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the token's conditions.
func (in *JoinToken) SetConditions(conditions []metav1.Condition) { in.Status.Conditions = conditions }

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=jt,categories=credo;credo-all;enrollment
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.spec.expiresAt`
// +kubebuilder:printcolumn:name="Revoked",type=boolean,JSONPath=`.spec.revoked`
// +kubebuilder:printcolumn:name="Uses",type=integer,JSONPath=`.status.uses`
// +kubebuilder:printcolumn:name="Last Used",type=date,JSONPath=`.status.lastUsedAt`
// +kubebuilder:printcolumn:name="Created By",type=string,JSONPath=`.spec.createdBy`,priority=1
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// JoinToken is the record of one join token: its name is the token's id.
type JoinToken struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the record of a join token. It holds a hash of the
	// token's secret part, never the secret. Written by the access API when a
	// JoinTokenRequest is created; tenants revoke it by setting revoked.
	// +optional
	Spec JoinTokenSpec `json:"spec,omitempty"`

	// status records the token's uses.
	// +kubebuilder:default={"uses":0}
	// +optional
	Status JoinTokenStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// JoinTokenList contains a list of JoinToken.
type JoinTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []JoinToken `json:"items"`
}

// EnrollsUntil is when the token stops enrolling: spec.expiresAt, or its
// creation plus maxLifetime (the platform's maximum token lifetime; zero
// for none) when that comes first.
func (in *JoinToken) EnrollsUntil(maxLifetime time.Duration) time.Time {
	end := in.Spec.ExpiresAt.Time
	if maxLifetime > 0 && !in.CreationTimestamp.IsZero() {
		if byAge := in.CreationTimestamp.Add(maxLifetime); byAge.Before(end) {
			return byAge
		}
	}
	return end
}

// UsableAt reports whether the token can enroll at now: it is neither
// revoked nor being deleted, and now is before EnrollsUntil(maxLifetime).
// The enrollment server, the policy's count and kubectl credo all judge a
// token so.
func (in *JoinToken) UsableAt(now time.Time, maxLifetime time.Duration) bool {
	return !in.Spec.Revoked && in.DeletionTimestamp.IsZero() && now.Before(in.EnrollsUntil(maxLifetime))
}
