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

const (
	// WorkloadTokenField is the field selector of a Workload's join token
	// (a selectable field of the CRD): the enrollment server counts a
	// token's pending registrations with it.
	WorkloadTokenField = "spec.token"

	// WorkloadKind is the kind of a Workload.
	WorkloadKind = "Workload"
)

// WorkloadSpec is the registry entry of an enrolled workload: what it may
// do is decided here, not by its certificate. Written by the enrollment
// server; the workload's name is its UUID.
// +kubebuilder:validation:XValidation:rule="self.policy == oldSelf.policy",message="policy is immutable"
// +kubebuilder:validation:XValidation:rule="self.token == oldSelf.token",message="token is immutable"
type WorkloadSpec struct {
	// policy is the EnrollmentPolicy the workload enrolled under.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Policy string `json:"policy"`

	// token is the id of the JoinToken the workload enrolled with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Token string `json:"token"`

	// hostname the agent reported.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// labels of the workload, allowed by the policy when it enrolled.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// WorkloadStatus is the workload's current certificate.
type WorkloadStatus struct {
	// conditions holds Ready, True once the workload holds a certificate.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// serial of the current certificate, lower-case hex. Only the
	// certificate with this serial may renew.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Serial string `json:"serial,omitempty"`

	// notBefore is the start of the current certificate's validity.
	// +optional
	NotBefore *metav1.Time `json:"notBefore,omitempty"`
	// notAfter is the end of the current certificate's validity.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`

	// renewAfter is the start of the renewal window: the last third of the lifetime.
	// +optional
	RenewAfter *metav1.Time `json:"renewAfter,omitempty"`

	// enrolledAt is when the first certificate was issued.
	// +optional
	EnrolledAt *metav1.Time `json:"enrolledAt,omitempty"`

	// lastRenewal is when the certificate was last renewed.
	// +optional
	LastRenewal *metav1.Time `json:"lastRenewal,omitempty"`

	// renewals is the number of renewals since enrollment.
	// +kubebuilder:default=0
	// +optional
	Renewals int64 `json:"renewals,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wl,categories=credo;credo-all;enrollment
// +kubebuilder:selectablefield:JSONPath=`.spec.token`
// +kubebuilder:printcolumn:name="Hostname",type=string,JSONPath=`.spec.hostname`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.notAfter`
// +kubebuilder:printcolumn:name="Renew After",type=string,JSONPath=`.status.renewAfter`
// +kubebuilder:printcolumn:name="Serial",type=string,JSONPath=`.status.serial`,priority=1
// +kubebuilder:printcolumn:name="Renewals",type=integer,JSONPath=`.status.renewals`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// Workload is an enrolled agent: its certificate carries only
// credo://workload/<name>; everything else about it lives here.
type Workload struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the registry entry of an enrolled workload: what it may
	// do is decided here, not by its certificate. Written by the enrollment
	// server; the workload's name is its UUID.
	// +optional
	Spec WorkloadSpec `json:"spec,omitempty"`
	// status is the workload's current certificate.
	// +optional
	Status WorkloadStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *Workload) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *Workload) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// +kubebuilder:object:root=true

// WorkloadList contains a list of Workload.
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}
