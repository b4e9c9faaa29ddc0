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
	// (a selectable field of the CRD): kubectl get workloads
	// --field-selector spec.token=<id> lists a token's Workloads.
	WorkloadTokenField = "spec.token"

	// WorkloadKind is the kind of a Workload.
	WorkloadKind = "Workload"
)

// WorkloadSpec is the registry entry of an enrolled workload: what it may
// do is decided here, not by its certificate. Written by the enrollment
// server; the workload's name is its UUID. Its policy and token never
// change; its labels and hostname (its attributes) change without
// re-enrollment, written by those the platform allows (config/admission's
// credo-workload-attributes: the relabel verb, in the writer's own name),
// and take effect once the enrollment-controller has established them
// (status.labels, status.hostname); spec.denied locks it out.
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

	// hostname of the workload: the one the agent reported at enrollment,
	// until a relabel changes it.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// labels of the workload: at enrollment the ones the agent asked for
	// and its policy allowed; changed since by relabels. The policy's
	// allowedLabels bound them always: a change that names a label the
	// policy does not allow is not established (status.labels keeps the
	// previous ones).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// changedBy is who last changed labels or hostname: `kubectl credo
	// workload label` writes the user kube-apiserver authenticated it as.
	// With config/admission installed, a change of labels or hostname is
	// admitted only from a holder of the relabel verb on the Workload and
	// only in its own name here.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ChangedBy string `json:"changedBy,omitempty"`

	// denied locks the workload out before its certificate expires: while it
	// is set, the workload renews nothing, within its renewal grace or not.
	// Removing it restores renewal (within the grace). Set it with
	// `kubectl credo workload deny`, or in Git.
	// +optional
	Denied *WorkloadDenial `json:"denied,omitempty"`
}

// WorkloadDenial says why a workload is locked out, and who locked it out.
type WorkloadDenial struct {
	// reason is why the workload is denied; the refused agent is told it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Reason string `json:"reason"`

	// by is who denied the workload: `kubectl credo workload deny` writes
	// the user kube-apiserver authenticated it as, the enrollment server
	// its own service account when a policy denies duplicates. With
	// config/admission installed, a deny that names anybody but its
	// requester is refused.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	By string `json:"by,omitempty"`
}

// DuplicateAction is what the enrollment server does when a renewal
// presents a certificate of a workload that is not its latest one.
// +kubebuilder:validation:Enum=Deny;ForceReenroll;Record
type DuplicateAction string

const (
	// DuplicateForceReenroll: both copies are refused from then on and
	// must enroll again with a join token, each getting its own UUID.
	DuplicateForceReenroll DuplicateAction = "ForceReenroll"
	// DuplicateDeny: the workload is denied (spec.denied), so both copies
	// are refused until an operator removes the denial.
	DuplicateDeny DuplicateAction = "Deny"
	// DuplicateRecord: the duplicate is recorded and the copy presenting
	// the older certificate is refused as not current (it must enroll
	// again); the copy holding the latest certificate keeps renewing.
	DuplicateRecord DuplicateAction = "Record"
)

// WorkloadPeer is one side of an enrollment or renewal: the certificate it
// held or got, and what the listener saw of the host.
type WorkloadPeer struct {
	// serial of the certificate, lower-case hex.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Serial string `json:"serial,omitempty"`

	// address is the source address of the request, as the enrollment
	// listener saw it.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Address string `json:"address,omitempty"`

	// hostname the agent sent.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// bootID the agent sent: the kernel's random boot id on Linux, which
	// differs between two running copies of one image.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	BootID string `json:"bootID,omitempty"`

	// at is when the request was served.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
}

// DuplicateIdentityRecord is the last duplicate-identity signal of a workload.
type DuplicateIdentityRecord struct {
	// detectedAt is when the duplicate was last seen.
	// +required
	DetectedAt metav1.Time `json:"detectedAt"`

	// action is what the policy's onDuplicate did.
	// +required
	Action DuplicateAction `json:"action"`

	// count is how many duplicate signals were seen.
	// +kubebuilder:validation:Minimum=1
	// +required
	Count int32 `json:"count"`

	// current is the holder of the latest certificate, as it got it.
	// +required
	Current WorkloadPeer `json:"current"`

	// presented is the renewal that presented an older, still valid certificate.
	// +required
	Presented WorkloadPeer `json:"presented"`
}

// WorkloadAttributeChange is one change of a workload's established
// attributes.
type WorkloadAttributeChange struct {
	// at is when the enrollment-controller established the change.
	// +required
	At metav1.Time `json:"at"`

	// by is who made it, as far as it is established: spec.changedBy when
	// credo-workload-attributes admitted it (it admits a change only in its
	// writer's own name), policy/<name> when the policy stopped allowing a
	// label, empty when neither holds.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	By string `json:"by,omitempty"`

	// previousLabels are the labels before the change.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	PreviousLabels map[string]string `json:"previousLabels,omitempty"`

	// previousHostname is the hostname before the change.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PreviousHostname string `json:"previousHostname,omitempty"`
}

// WorkloadStatus is the workload's current certificate, and its
// established attributes.
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

	// uri is the current certificate's one URI SAN, in the identity form
	// the install wrote it in when it was issued (credo://workload/<uuid>
	// by default; see the enrollment-controller's --identity-scheme and
	// --trust-domain). After a change of form, the workloads whose uri is
	// still in the former form are those yet to renew.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	URI string `json:"uri,omitempty"`

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

	// previousSerial is the serial of the certificate the current one
	// replaced.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	PreviousSerial string `json:"previousSerial,omitempty"`

	// certificate is the current certificate and its chain, PEM: a renewal
	// whose answer was lost, retried with the same certificate request
	// within the renewal retry window, is answered with it again.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Certificate string `json:"certificate,omitempty"`

	// requestSHA256 is the hex SHA-256 of the DER certificate request the
	// current certificate was signed for.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RequestSHA256 string `json:"requestSHA256,omitempty"`

	// issuedTo is the request that got the current certificate.
	// +optional
	IssuedTo *WorkloadPeer `json:"issuedTo,omitempty"`

	// deniedAt is when the enrollment-controller first saw spec.denied
	// set; cleared when it is removed.
	// +optional
	DeniedAt *metav1.Time `json:"deniedAt,omitempty"`

	// deniedBy is who denied the workload, as the enrollment-controller
	// established it: spec.denied.by, recorded only while the admission
	// policy credo-workload-denials (which admits a denial only in its
	// writer's name) and its binding are installed, deny, cover every
	// namespace, and are older than the Workload, so that they admitted
	// every write of its spec.denied. Empty when spec.denied.by is, or
	// when it could not be established (the Ready message says why).
	// Namespace admins may write spec.denied but not the status: this is
	// the record of who denied that a tenant cannot forge, for the
	// generation the Ready condition (reason Denied) observed.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	DeniedBy string `json:"deniedBy,omitempty"`

	// labels are the workload's established labels: what the registry
	// answers for it. spec.labels once the enrollment-controller has
	// established them (allowed by the policy), less any label the policy
	// has stopped allowing.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// hostname is the workload's established hostname.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// attributesGeneration is the metadata.generation whose spec.labels
	// and spec.hostname the enrollment-controller last judged; 0 until it
	// has.
	// +optional
	AttributesGeneration int64 `json:"attributesGeneration,omitempty"`

	// attributeHistory are the last changes of the established attributes,
	// newest first (the audit log keeps every write).
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	AttributeHistory []WorkloadAttributeChange `json:"attributeHistory,omitempty"`

	// duplicate is the last duplicate-identity signal: a renewal that
	// presented a still valid certificate of this workload other than its
	// latest one (a cloned host). The DuplicateIdentity condition says the same.
	// +optional
	Duplicate *DuplicateIdentityRecord `json:"duplicate,omitempty"`
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
// +kubebuilder:printcolumn:name="URI",type=string,JSONPath=`.status.uri`,priority=1
// +kubebuilder:printcolumn:name="Denied",type=string,JSONPath=`.spec.denied.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// Workload is an enrolled agent: its certificate carries only its workload
// URI (credo://workload/<name> in the default identity form, status.uri);
// everything else about it lives here.
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

// ForcedToReenroll reports whether a duplicate identity was detected
// under ForceReenroll: no copy of the workload renews any more.
func (in *Workload) ForcedToReenroll() bool {
	return in.Status.Duplicate != nil && in.Status.Duplicate.Action == DuplicateForceReenroll
}

// +kubebuilder:object:root=true

// WorkloadList contains a list of Workload.
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}
