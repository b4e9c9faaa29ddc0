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

package migrate

// Reasons a release is skipped. A skipped release is written nothing, and
// is listed in the report ConfigMap until a run migrates it.
const (
	// HelmReleaseNotFoundReason: CredentialAccounts name a release that has
	// no HelmRelease.
	HelmReleaseNotFoundReason = "HelmReleaseNotFound"
	// SuspendedReason: the HelmRelease is suspended; its values would not
	// reach the engine, so nothing is changed under it.
	SuspendedReason = "Suspended"
	// NotReadyReason: the HelmRelease is not Ready; it is migrated once its
	// last reconciliation succeeded.
	NotReadyReason = "NotReady"
	// CredentialsMissingReason: the release has no <release>-credentials
	// Secret to carry passwords over from.
	CredentialsMissingReason = "CredentialsMissing"
	// KeyMissingReason: a tenant account that still needs its password
	// carried over has no key of its username in <release>-credentials.
	KeyMissingReason = "KeyMissing"
	// AccountSecretMissingReason: the controller has not created an
	// account's Secret yet; the migration never creates one.
	AccountSecretMissingReason = "AccountSecretMissing"
	// AccountSecretForeignReason: an account's Secret was not written by
	// credo, or does not carry the account's identity; it is never written.
	AccountSecretForeignReason = "AccountSecretForeign"
	// FormatRefusedReason: an account's format is not one credo computes.
	FormatRefusedReason = "FormatRefused"
	// PlaintextExposedReason: a platform account of format plaintext is
	// Stalled because its plaintext could be read or replaced by more than
	// its consumers (the controller's PlaintextExposed): the migration
	// rotates nothing into that namespace either.
	PlaintextExposedReason = "PlaintextExposed"
	// ReferencedSecretMissingReason: the Secret a platform plaintext
	// account's running consumer reads (spec.plaintext.secretRef) does not
	// exist.
	ReferencedSecretMissingReason = "ReferencedSecretMissing"
	// ReferencedSecretForeignReason: that Secret is not an object of the
	// release's Helm release; credo keeps and adopts only the chart's own.
	ReferencedSecretForeignReason = "ReferencedSecretForeign"
	// HelmRecordUnreadableReason: the release's latest Helm record could
	// not be read, or status.history does not name it (a newer record
	// exists, another release's), so whether the chart still renders that
	// Secret is unknown.
	HelmRecordUnreadableReason = "HelmRecordUnreadable"
	// StillRenderedReason: the release's latest Helm record still renders
	// that Secret: it is adopted once the chart no longer does.
	StillRenderedReason = "StillRendered"
	// WriteFailedReason: a write failed (a conflict with a concurrent
	// write, a refusal by the API server); the run can be repeated.
	WriteFailedReason = "WriteFailed"
)

// Reasons an account is left as it is within a release that is not
// skipped.
const (
	// UpToDateReason: the account Secret already holds the verifier of the
	// chart's password, with origin Migrated.
	UpToDateReason = "UpToDate"
	// NewerPasswordReason: the account was minted or revoked: its password
	// is newer than the chart's and is never overwritten by it.
	NewerPasswordReason = "NewerPassword"
	// AlreadyRotatedReason: the migration rotated this platform account
	// before.
	AlreadyRotatedReason = "AlreadyRotated"
	// AfterSwitchReason: --phase=prepare rotates no platform account; the
	// run after the chart switch does.
	AfterSwitchReason = "AfterSwitch"
	// AlreadyKeptReason: the Secret a running consumer reads already
	// carries helm.sh/resource-policy: keep (or was adopted).
	AlreadyKeptReason = "AlreadyKept"
)

// Reasons an account is written.
const (
	// CarryOverReason: a tenant account's Secret gets the verifier of the
	// chart's password, origin Migrated, marked previously exposed.
	CarryOverReason = "CarryOver"
	// ChangedSinceMigrationReason: the chart's password changed since a
	// previous run carried it over; the new one is carried over.
	ChangedSinceMigrationReason = "ChangedSinceMigration"
	// ExposedReason: a platform account's password was readable in
	// <release>-credentials; it is rotated once.
	ExposedReason = "Exposed"
	// MaybeExposedReason: a platform account's username is no key of
	// <release>-credentials now, but the tenant may write that Secret and
	// Helm history keeps earlier renderings: it is rotated once all the
	// same.
	MaybeExposedReason = "MaybeExposed"
	// BeforeSwitchReason: the Secret a running consumer reads is stamped
	// helm.sh/resource-policy: keep, so that the chart switch leaves it.
	BeforeSwitchReason = "BeforeSwitch"
	// NoLongerRenderedReason: no Helm release renders that Secret any more:
	// it is adopted, and the account rotated once.
	NoLongerRenderedReason = "NoLongerRendered"
)
