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

// Reasons of the Ready condition of a Workload.
const (
	// PendingReason (False): registered by enrollment step 1, no certificate yet.
	PendingReason string = "Pending"
	// EnrolledReason (True): the first certificate was issued.
	EnrolledReason string = "Enrolled"
	// RenewedReason (True): the certificate was renewed.
	RenewedReason string = "Renewed"
	// ExpiredReason (False): the certificate expired and the renewal grace is
	// over; the workload must enroll again with a token.
	ExpiredReason string = "Expired"
	// PolicyNotFoundReason (False): the workload's EnrollmentPolicy does not
	// exist; the workload renews nothing until it exists again. The
	// workload is kept.
	PolicyNotFoundReason string = "PolicyNotFound"
	// DeniedReason (False): spec.denied is set; the workload renews
	// nothing until it is removed.
	DeniedReason string = "Denied"
	// DuplicateIdentityReason (False): a duplicate identity was detected
	// under onDuplicate ForceReenroll; every copy must enroll again with a
	// join token.
	DuplicateIdentityReason string = "DuplicateIdentity"
)

// DuplicateIdentityCondition (abnormal-true) is set on a Workload when a
// renewal presented a still valid certificate of it that is not its latest
// one. Its reason is the action taken: ForceReenroll, Deny or Record
// (the DuplicateAction values); its message names both serials, addresses
// and hosts. It stays as the record; deleting the Workload clears it.
const DuplicateIdentityCondition string = "DuplicateIdentity"

// AttributesRefusedCondition (abnormal-true) is set on a Workload while
// its spec's labels or hostname are not its established ones
// (status.labels, status.hostname): a change its policy does not allow.
// The workload keeps renewing; the registry answers the established
// attributes.
const AttributesRefusedCondition string = "AttributesRefused"

// Reasons of the AttributesRefused condition of a Workload, and of the
// events of attribute changes.
const (
	// LabelsNotAllowedReason (AttributesRefused True, Warning event):
	// spec.labels names a label, or a value, that the workload's policy
	// does not allow.
	LabelsNotAllowedReason string = "LabelsNotAllowed"
	// AttributesChangedReason (Normal event): the established labels or
	// hostname changed.
	AttributesChangedReason string = "AttributesChanged"
	// LabelsWithdrawnReason (Warning event): the policy stopped allowing
	// an established label, and it was dropped.
	LabelsWithdrawnReason string = "LabelsWithdrawn"
)

// Reasons of the Ready condition of an EnrollmentPolicy.
const (
	// PolicyRevokedReason (False): spec.revoked is set; nothing enrolls or renews.
	PolicyRevokedReason string = "Revoked"
	// InvalidDurationReason (Stalled): certificateTTL is under 5s,
	// renewalGrace over MaxRenewalGrace, or tokenLifetime is not positive.
	// The message names the field.
	InvalidDurationReason string = "InvalidDuration"
	// ExceedsPlatformLimitReason (Stalled): certificateTTL, tokenLifetime or
	// renewalGrace (set, or its default) is over the platform's maximum
	// (the enrollment-controller's --max-* flags). Nothing enrolls or renews
	// under the policy until it is lowered; the message names the field,
	// its value and the maximum.
	ExceedsPlatformLimitReason string = "ExceedsPlatformLimit"
)

// Reasons of the Ready condition of a JoinToken, written by the
// EnrollmentPolicy controller, which judges each token of a policy as the
// enrollment server does.
const (
	// TokenUsableReason (True): the token can enroll until it expires.
	TokenUsableReason string = "Usable"
	// TokenRevokedReason (False): spec.revoked is set; the token enrolls
	// nothing further, and the workloads it enrolled keep renewing.
	TokenRevokedReason string = "Revoked"
	// TokenExpiredReason (False): the token's expiry (or the platform's
	// maximum token lifetime) has passed; it enrolls nothing further.
	TokenExpiredReason string = "Expired"
	// TokenPolicyRevokedReason (False): the token's EnrollmentPolicy is
	// revoked; nothing enrolls under it.
	TokenPolicyRevokedReason string = "PolicyRevoked"
)

// Reasons of events emitted by the enrollment controllers.
const (
	// PendingTimeoutReason (Normal): a Workload registered by enrollment step 1
	// got no certificate within the pending timeout and was deleted.
	PendingTimeoutReason string = "PendingTimeout"
)

// Reasons of events emitted by the enrollment server (Warning unless noted).
const (
	// EnrollmentRefusedReason: an enrollment was refused (bad token, labels, CSR).
	EnrollmentRefusedReason string = "EnrollmentRefused"
	// RenewalRefusedReason: a renewal was refused (not current, grace over, policy revoked).
	RenewalRefusedReason string = "RenewalRefused"
	// RenewalDeniedReason: a renewal of a denied workload was refused.
	RenewalDeniedReason string = "RenewalDenied"
	// DuplicateIdentityEventReason: a renewal presented a still valid
	// certificate of the workload that is not its latest one.
	DuplicateIdentityEventReason string = "DuplicateIdentity"
	// RenewalRetriedReason (Normal): a renewal retried with the request
	// whose answer was lost got the certificate already issued.
	RenewalRetriedReason string = "RenewalRetried"
	// EnrolledEventReason (Normal): a workload received its first certificate.
	EnrolledEventReason string = "Enrolled"
	// TokenAttemptsRateLimitedReason: failed token attempts from one address were rate limited.
	TokenAttemptsRateLimitedReason string = "TokenAttemptsRateLimited"
	// CARotatedReason (Normal): the embedded CA was rotated.
	CARotatedReason string = "CARotated"
	// UnusedCAKeysReason (Warning): the key store has held, for minutes,
	// CA keys that no CA of the CA Secret names.
	UnusedCAKeysReason string = "UnusedCAKeys"
)
