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

import releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"

// Condition types of a TrustAnchor, besides meta.ReadyCondition,
// meta.ReconcilingCondition and meta.StalledCondition. Each is of negative
// polarity: present and True only while something is wrong, removed once it
// is resolved. Ready is derived from them; no step sets Ready itself.
const (
	// SourceUnavailableCondition is True when the CA cannot be read: the
	// HelmRelease or the source Secret or its key is missing, or more than one
	// source claims the release.
	SourceUnavailableCondition string = "SourceUnavailable"

	// SourceRejectedCondition is True when the source's value is refused by
	// the guard: it holds a private key, or anything that is not a certificate.
	// The existing projection is kept unchanged.
	SourceRejectedCondition string = "SourceRejected"

	// ProjectionFailedCondition is True when the <release>.tenant-ca Secret
	// cannot be written, a foreign Secret of that name among the reasons.
	ProjectionFailedCondition string = "ProjectionFailed"

	// CertificateWarningCondition is True when the projected certificates are
	// usable but something about them needs an operator: not a CA, no
	// keyCertSign, expired or expiring soon. The anchor is still projected.
	// It affects Ready only for an expired certificate.
	CertificateWarningCondition string = "CertificateWarning"

	// ProjectedByPlatformCondition is True when <release>.tenant-ca is the
	// platform's: written by its TenantProjection controller (owner-referenced
	// to a TenantProjection) while the trust-controller leaves those
	// projections to it (--tenant-projections=platform). Informational, of
	// positive polarity: credo does not write the projection then, records
	// it and checks its certificates, and Ready says the anchor is
	// projected. Removed once credo projects the release itself.
	ProjectedByPlatformCondition string = "ProjectedByPlatform"
)

// Reasons of the TrustAnchor conditions.
const (
	// HelmReleaseNotFoundReason (SourceUnavailable): the release the anchor
	// belongs to does not exist; the projection would have no owner.
	HelmReleaseNotFoundReason string = "HelmReleaseNotFound"

	// SourceNotFoundReason (SourceUnavailable): the source Secret does not
	// exist yet. Operators create their CA asynchronously; the controller waits
	// on the watch, without error or requeue.
	SourceNotFoundReason string = "SourceNotFound"

	// KeyNotFoundReason (SourceUnavailable): the source Secret has no value
	// under the key to lift.
	KeyNotFoundReason string = "KeyNotFound"

	// SourceWithdrawnReason (SourceUnavailable): the label or rule that made
	// this anchor no longer claims the release. The last projection is kept
	// until the HelmRelease is deleted.
	SourceWithdrawnReason string = "SourceWithdrawn"

	// AmbiguousSourceReason (SourceUnavailable): more than one source claims
	// the release; nothing is projected from either until one is removed.
	AmbiguousSourceReason string = "AmbiguousSource"

	// PrivateKeyDetectedReason (SourceRejected): the value holds a private
	// key block, in any spelling. Nothing is written.
	PrivateKeyDetectedReason string = "PrivateKeyDetected"

	// InvalidCertificateReason (SourceRejected): the value is not one or more
	// parseable CERTIFICATE PEM blocks and nothing else.
	InvalidCertificateReason string = "InvalidCertificate"

	// NameCollisionReason (ProjectionFailed): a Secret named <release>.tenant-ca
	// that credo did not create exists; it is never written.
	NameCollisionReason string = "NameCollision"

	// WriteFailedReason (ProjectionFailed): the API server refused the write.
	WriteFailedReason string = "WriteFailed"

	// NotCAReason (CertificateWarning): a certificate is not a CA
	// (basicConstraints CA:FALSE or absent).
	NotCAReason string = "NotCA"

	// MissingKeyCertSignReason (CertificateWarning): a CA certificate's key
	// usage does not include keyCertSign.
	MissingKeyCertSignReason string = "MissingKeyCertSign"

	// ExpiringSoonReason (CertificateWarning): a certificate expires within the
	// controller's warning window.
	ExpiringSoonReason string = "ExpiringSoon"

	// ExpiredReason (CertificateWarning, and Ready=False): a certificate has
	// expired.
	ExpiredReason string = "Expired"
)

// Reasons of events.
const (
	// ProjectedReason (Normal event): the projection was written with new
	// content: created, or rotated because the source changed.
	ProjectedReason string = "Projected"

	// PlatformProjectionReason (ProjectedByPlatform=True, and one Normal
	// event when it becomes so): the platform's TenantProjection controller
	// wrote the projection; credo records it and does not write it.
	PlatformProjectionReason string = "PlatformProjection"

	// WaitingForPlatformReason (Reconciling): a TenantProjection claims the
	// release and the platform's controller projects it; no projection
	// exists yet.
	WaitingForPlatformReason string = "WaitingForPlatform"

	// AdoptedReason (Normal event): with --tenant-projections=credo, the
	// platform's projection was taken over in place: the same Secret (UID)
	// and bytes, owner-referenced to the HelmRelease from then on.
	AdoptedReason string = "Adopted"

	// HandedBackReason (Normal event): with --tenant-projections=platform,
	// a projection credo wrote for a release a TenantProjection claims was
	// owner-referenced to that TenantProjection, which makes it the
	// platform controller's own: it keeps the Secret and its bytes.
	HandedBackReason string = "HandedBack"
)

// Reasons of the TrustSource conditions.
const (
	// InvalidSelectorReason (Stalled): a selector of the rule cannot be parsed.
	InvalidSelectorReason string = "InvalidSelector"

	// InvalidSecretNameReason (Stalled) when secretName cannot name a
	// Secret for any release (no {release}, or not a Secret name with it
	// replaced). For some releases only (too long once a release's name is
	// in it, which the release's author chooses): ReleasesNotApplied=True
	// and a Warning event on each such HelmRelease, and the rule stays
	// Ready. The rule claims no release it cannot name a Secret for.
	InvalidSecretNameReason string = "InvalidSecretName"

	// NoReleasesMatchedReason (Ready=False): the rule selects no release.
	NoReleasesMatchedReason string = releasev1.NoReleasesMatchedReason

	// ChartUnresolvedReason (ReleasesNotApplied=True, and a Warning event on
	// the HelmRelease): the chart of a release's spec.chartRef cannot be
	// resolved; what the rule made for it is kept. Ready is not affected.
	ChartUnresolvedReason string = releasev1.ChartUnresolvedReason
)

// ReleasesNotAppliedCondition (negative polarity, does not affect Ready) of
// a TrustSource: see releasev1.ReleasesNotAppliedCondition. Its reasons,
// by precedence: InvalidSecretName, ChartUnresolved.
const ReleasesNotAppliedCondition string = releasev1.ReleasesNotAppliedCondition
