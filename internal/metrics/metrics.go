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

// Package metrics defines credo's own Prometheus counters, all named
// credo_*, and registers them on controller-runtime's metrics.Registry, so
// every binary that imports a package recording them serves them on its
// --metrics-addr endpoint beside Flux's gotk_reconcile_duration_seconds.
//
// Labels are bounded: at most the namespace (one per tenant) and a reason,
// operation or action taken from a fixed set of constants. No object name of an
// unbounded set (workloads, tokens, client addresses) and nothing secret
// (password, verifier, key, token, certificate) is ever a label value.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names.
const (
	labelNamespace = "namespace"
	labelReason    = "reason"
	labelOperation = "operation"
	labelAction    = "action"
	labelKind      = "kind"
)

// Operations of the access API, the values of the operation label.
const (
	// OperationMint is a mint: a new password for an account.
	OperationMint = "mint"
	// OperationRevoke is a revocation: the account's password withdrawn.
	OperationRevoke = "revoke"
)

var (
	projectionsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_trust_projections_written_total",
		Help: "Trust anchor projections (<release>.tenant-ca Secrets) created, or rewritten because their certificates changed.",
	}, []string{labelNamespace})
	keysRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_trust_keys_refused_total",
		Help: "Source Secret keys refused by the trust-controller (a private key, or anything but certificates), by reason.",
	}, []string{labelNamespace, labelReason})
	trustCollisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_trust_collisions_total",
		Help: "Projections refused because a Secret of their name exists that credo did not create.",
	}, []string{labelNamespace})

	accountSecretsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_secrets_created_total",
		Help: "Account Secrets created by the credential-controller (NotIssued, or Generated for platform accounts).",
	}, []string{labelNamespace})
	accountRotations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_rotations_total",
		Help: "Platform account passwords rotated by the credential-controller on a new spec.rotate.",
	}, []string{labelNamespace})
	accountCollisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_collisions_total",
		Help: "Accounts refused because their Secret name is taken by a foreign Secret or another account.",
	}, []string{labelNamespace})

	verifiersTampered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_verifiers_tampered_total",
		Help: "Platform account verifiers found not to match the password credo keeps, and repaired from it.",
	}, []string{labelNamespace})
	valuesShadowed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_values_shadowed_total",
		Help: "Accounts delivered through valuesFrom found shadowed: another entry, a post-renderer, or deployed values that do not carry the account's verifier.",
	}, []string{labelNamespace})
	valuesFromRewritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_values_from_rewritten_total",
		Help: "Writes by which the credential-controller put back what it had placed on a HelmRelease (its valuesFrom entry, the platform-values label) after another writer undid it; bounded per release, then ValuesFromContested.",
	}, []string{labelNamespace})
	recordsSwept = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_credential_records_swept_total",
		Help: "Account Secrets and kept platform passwords deleted by the sweep, by tenant namespace and why (AccountDeleted, NamespaceDeleted, ReleaseDeleted).",
	}, []string{labelNamespace, labelReason})
	mints = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_access_mints_total",
		Help: "Passwords minted through the access API (each mint of an issued account is a rotation).",
	}, []string{labelNamespace})
	revocations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_access_revocations_total",
		Help: "Passwords revoked through the access API.",
	}, []string{labelNamespace})
	accessRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_access_refused_total",
		Help: "Mints and revocations the access API refused or failed, by operation and Kubernetes status reason.",
	}, []string{labelNamespace, labelOperation, labelReason})

	enrollments = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_enrollments_total",
		Help: "Workloads enrolled with a join token (a first certificate issued).",
	}, []string{labelNamespace})
	renewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_renewals_total",
		Help: "Workload certificates renewed.",
	}, []string{labelNamespace})
	enrollmentRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_refused_total",
		Help: "Enrollment and renewal requests the enrollment listener answered with an error, by its reason (RateLimited counts rate-limited attempts).",
	}, []string{labelReason})
	lookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_lookups_total",
		Help: "Lookups the enrollment listener answered for relying services, by the namespace of the workload looked up (refused ones count in credo_enrollment_refused_total).",
	}, []string{labelNamespace})
	lookupReviews = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_lookup_reviews_total",
		Help: "Reviews the enrollment listener asked of kube-apiserver to answer lookups (SubjectAccessReview, TokenReview): decisions it held in memory need none.",
	}, []string{labelKind})
	duplicateIdentities = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "credo_enrollment_duplicate_identities_total",
		Help: "Renewals that presented a still valid certificate of a workload other than its latest one (a cloned host), by namespace and the policy's onDuplicate action.",
	}, []string{labelNamespace, labelAction})
)

// Collectors returns every credo counter.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		projectionsWritten, keysRefused, trustCollisions,
		accountSecretsCreated, accountRotations, accountCollisions, verifiersTampered, valuesShadowed, valuesFromRewritten, recordsSwept,
		mints, revocations, accessRefused,
		enrollments, renewals, enrollmentRefused, duplicateIdentities, lookups, lookupReviews,
	}
}

func init() {
	crmetrics.Registry.MustRegister(Collectors()...)
}

// ProjectionWritten counts a projection created or rewritten with new certificates.
func ProjectionWritten(namespace string) { projectionsWritten.WithLabelValues(namespace).Inc() }

// KeyRefused counts a source key refused for reason, one of internal/pem's Reasons.
func KeyRefused(namespace, reason string) { keysRefused.WithLabelValues(namespace, reason).Inc() }

// TrustCollision counts a projection refused because of a foreign Secret.
func TrustCollision(namespace string) { trustCollisions.WithLabelValues(namespace).Inc() }

// AccountSecretCreated counts an account Secret created by the controller.
func AccountSecretCreated(namespace string) { accountSecretsCreated.WithLabelValues(namespace).Inc() }

// AccountRotated counts a platform account's password rotated by the controller.
func AccountRotated(namespace string) { accountRotations.WithLabelValues(namespace).Inc() }

// AccountCollision counts an account refused because its Secret name is taken.
func AccountCollision(namespace string) { accountCollisions.WithLabelValues(namespace).Inc() }

// VerifierTampered counts a platform account verifier repaired from the kept password.
func VerifierTampered(namespace string) { verifiersTampered.WithLabelValues(namespace).Inc() }

// ValuesShadowed counts an account delivered through valuesFrom found
// shadowed (credv1.ValuesShadowedReason).
func ValuesShadowed(namespace string) { valuesShadowed.WithLabelValues(namespace).Inc() }

// ValuesFromRewritten counts a write putting back, on a HelmRelease, what
// credo had placed and another writer undid (credv1.ValuesFromContestedReason
// once too many).
func ValuesFromRewritten(namespace string) { valuesFromRewritten.WithLabelValues(namespace).Inc() }

// Why the credential-controller's sweep deletes a record (an account
// Secret, a platform account's kept password).
const (
	// SweptAccountDeleted: its CredentialAccount is gone.
	SweptAccountDeleted = "AccountDeleted"
	// SweptNamespaceDeleted: the tenant namespace it was bound to is gone.
	SweptNamespaceDeleted = "NamespaceDeleted"
	// SweptReleaseDeleted: the HelmRelease it was bound to is gone.
	SweptReleaseDeleted = "ReleaseDeleted"
)

// RecordSwept counts a record of the tenant namespace deleted by the sweep
// for reason (SweptAccountDeleted, SweptNamespaceDeleted,
// SweptReleaseDeleted).
func RecordSwept(namespace, reason string) { recordsSwept.WithLabelValues(namespace, reason).Inc() }

// Minted counts a password minted through the access API.
func Minted(namespace string) { mints.WithLabelValues(namespace).Inc() }

// Revoked counts a password revoked through the access API.
func Revoked(namespace string) { revocations.WithLabelValues(namespace).Inc() }

// AccessRefused counts a mint or revocation (operation is OperationMint or
// OperationRevoke) answered with err. The label is err's Kubernetes status
// reason (Forbidden, Conflict, NotFound, BadRequest, InternalError, ...),
// never its message.
func AccessRefused(namespace, operation string, err error) {
	reason := string(apierrors.ReasonForError(err))
	if reason == "" {
		reason = "Unknown"
	}
	accessRefused.WithLabelValues(namespace, operation, reason).Inc()
}

// Enrolled counts a workload enrolled with a join token.
func Enrolled(namespace string) { enrollments.WithLabelValues(namespace).Inc() }

// Renewed counts a workload certificate renewed.
func Renewed(namespace string) { renewals.WithLabelValues(namespace).Inc() }

// EnrollmentRefused counts an enrollment or renewal request answered with
// an error; reason is one of pkg/enrollapi's Reason constants.
func EnrollmentRefused(reason string) { enrollmentRefused.WithLabelValues(reason).Inc() }

// Looked counts a lookup answered about a workload of namespace.
func Looked(namespace string) { lookups.WithLabelValues(namespace).Inc() }

// LookupReviewed counts a review sent to kube-apiserver for a lookup; kind
// is SubjectAccessReview or TokenReview.
func LookupReviewed(kind string) { lookupReviews.WithLabelValues(kind).Inc() }

// DuplicateIdentity counts a duplicate identity detected at renewal; action
// is the policy's onDuplicate (ForceReenroll, Deny or Record).
func DuplicateIdentity(namespace, action string) {
	duplicateIdentities.WithLabelValues(namespace, action).Inc()
}
