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
	// EnrollmentPolicyKind is the kind of an EnrollmentPolicy.
	EnrollmentPolicyKind = "EnrollmentPolicy"

	// DefaultTokenLifetime, DefaultCertificateTTL and DefaultRenewalGrace
	// apply when the spec leaves them out.
	DefaultTokenLifetime  = 24 * time.Hour
	DefaultCertificateTTL = 24 * time.Hour
	DefaultRenewalGrace   = time.Hour

	// MaxRenewalGrace bounds spec.renewalGrace: beyond it an expired
	// certificate renews nothing and the workload enrolls again with a token.
	MaxRenewalGrace = 7 * 24 * time.Hour
	// MinCertificateTTL is the shortest spec.certificateTTL: below it
	// renewal in the last third, jittered, has no room left.
	MinCertificateTTL = 5 * time.Second
	// MaxCertificateTTL bounds spec.certificateTTL in the CRD. The platform
	// sets a lower maximum (the enrollment-controller's
	// --max-certificate-ttl, 7 days by default); this bound is the most any
	// platform may allow.
	MaxCertificateTTL = 90 * 24 * time.Hour
	// MaxTokenLifetime bounds spec.tokenLifetime in the CRD. The platform
	// sets a lower maximum (--max-token-lifetime, 30 days by default).
	MaxTokenLifetime = 365 * 24 * time.Hour
)

// LabelRule allows one label key on enrolled workloads.
type LabelRule struct {
	// key of the label, a Kubernetes label key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Key string `json:"key"`

	// values the label may take. Empty allows any valid label value.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	Values []string `json:"values,omitempty"`
}

// EnrollmentPolicySpec says what workloads enrolled under the policy may be.
type EnrollmentPolicySpec struct {
	// allowedLabels are the labels a workload enrolled under this policy may
	// carry. A label not listed, or a value not allowed, refuses the enrollment.
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllowedLabels []LabelRule `json:"allowedLabels,omitempty"`

	// tokenLifetime is the longest lifetime of a join token minted from the
	// policy, and the default one. Defaults to 24h, at most 8760h; the
	// platform's maximum (--max-token-lifetime of the enrollment-controller,
	// 720h by default) is lower.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="tokenLifetime must be positive"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('8760h')",message="tokenLifetime must be at most 8760h"
	// +optional
	TokenLifetime *metav1.Duration `json:"tokenLifetime,omitempty"`

	// certificateTTL is the lifetime of the workload certificates. Defaults
	// to 24h, at least 5s, at most 2160h; the platform's maximum
	// (--max-certificate-ttl of the enrollment-controller, 168h by default)
	// is lower.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s')",message="certificateTTL must be at least 5s"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('2160h')",message="certificateTTL must be at most 2160h"
	// +optional
	CertificateTTL *metav1.Duration `json:"certificateTTL,omitempty"`

	// renewalGrace is how long after expiry a certificate may still renew
	// (and do nothing else). Defaults to 1h, at most 168h; the platform's
	// maximum (--max-renewal-grace of the enrollment-controller, 24h by
	// default) is lower. 0s allows no renewal after expiry.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('168h')",message="renewalGrace must be at most 168h"
	// +optional
	RenewalGrace *metav1.Duration `json:"renewalGrace,omitempty"`

	// revoked stops the policy: its tokens enroll nothing and its workloads
	// renew nothing. Their certificates lapse within one TTL.
	// +optional
	Revoked bool `json:"revoked,omitempty"`

	// onDuplicate is what happens when a renewal presents a still valid
	// certificate of a workload that is not its latest one, the sign of a
	// cloned host: ForceReenroll (the default) refuses both copies from
	// then on, so each enrolls again with a join token and gets its own
	// UUID; Deny denies the workload (spec.denied) until an operator lifts
	// it; Record only records it, and the copy with the older certificate
	// must enroll again. Each records the DuplicateIdentity condition.
	// +optional
	OnDuplicate DuplicateAction `json:"onDuplicate,omitempty"`
}

// EnrollmentPolicyStatus is the observed state of an EnrollmentPolicy.
type EnrollmentPolicyStatus struct {
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// tokens is the number of join tokens of the policy that can still enroll.
	// +kubebuilder:default=0
	// +optional
	Tokens int32 `json:"tokens"`

	// enrollments is the number of Workloads registered under the policy.
	// +kubebuilder:default=0
	// +optional
	Enrollments int32 `json:"enrollments"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=epol,categories=credo;credo-all;enrollment
// +kubebuilder:printcolumn:name="Tokens",type=integer,JSONPath=`.status.tokens`
// +kubebuilder:printcolumn:name="Workloads",type=integer,JSONPath=`.status.enrollments`
// +kubebuilder:printcolumn:name="TTL",type=string,JSONPath=`.spec.certificateTTL`,priority=1
// +kubebuilder:printcolumn:name="Revoked",type=boolean,JSONPath=`.spec.revoked`,priority=1
// +kubebuilder:printcolumn:name="On Duplicate",type=string,JSONPath=`.spec.onDuplicate`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// EnrollmentPolicy is the scope join tokens are minted from: which labels
// workloads may carry, how long tokens and certificates live.
type EnrollmentPolicy struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what workloads enrolled under the policy may be.
	// +optional
	Spec EnrollmentPolicySpec `json:"spec,omitempty"`
	// status is the observed state of an EnrollmentPolicy.
	// +optional
	Status EnrollmentPolicyStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *EnrollmentPolicy) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *EnrollmentPolicy) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return def
	}
	return d.Duration
}

// GetTokenLifetime returns spec.tokenLifetime or its default.
func (in *EnrollmentPolicy) GetTokenLifetime() time.Duration {
	return durationOr(in.Spec.TokenLifetime, DefaultTokenLifetime)
}

// GetCertificateTTL returns spec.certificateTTL or its default.
func (in *EnrollmentPolicy) GetCertificateTTL() time.Duration {
	return durationOr(in.Spec.CertificateTTL, DefaultCertificateTTL)
}

// GetRenewalGrace returns spec.renewalGrace (0 when set to 0s) or its
// default, capped at MaxRenewalGrace.
func (in *EnrollmentPolicy) GetRenewalGrace() time.Duration {
	if in.Spec.RenewalGrace == nil {
		return DefaultRenewalGrace
	}
	return min(max(in.Spec.RenewalGrace.Duration, 0), MaxRenewalGrace)
}

// RenewalDeadline is the last instant a certificate valid until notAfter
// renews under this policy: notAfter plus the renewal grace. The
// enrollment server refuses a renewal after it, and the Workload
// controller marks the workload Expired then.
func (in *EnrollmentPolicy) RenewalDeadline(notAfter time.Time) time.Time {
	return notAfter.Add(in.GetRenewalGrace())
}

// GetOnDuplicate returns spec.onDuplicate or its default, ForceReenroll.
func (in *EnrollmentPolicy) GetOnDuplicate() DuplicateAction {
	if in.Spec.OnDuplicate == "" {
		return DuplicateForceReenroll
	}
	return in.Spec.OnDuplicate
}

// +kubebuilder:object:root=true

// EnrollmentPolicyList contains a list of EnrollmentPolicy.
type EnrollmentPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EnrollmentPolicy `json:"items"`
}
