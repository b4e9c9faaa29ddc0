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

// Condition types of a CredentialAccount, besides Ready, Reconciling and
// Stalled. Each is of negative polarity: True only while something is wrong.
const (
	// FormatRefusedCondition is True when the account's format cannot be
	// used: an unknown built-in name, or a kind not built yet.
	FormatRefusedCondition string = "FormatRefused"

	// SecretFailedCondition is True when the account Secret cannot be
	// written: a foreign Secret at its name, a name shared with another
	// account, or a refused write.
	SecretFailedCondition string = "SecretFailed"

	// DeliveryFailedCondition is True when the verifier cannot be delivered
	// to the release through its valuesFrom: the HelmRelease is missing,
	// suspended, or owned by a GitOps applier that would revert the edit.
	DeliveryFailedCondition string = "DeliveryFailed"
)

// ReleasePendingCondition is informational and does not affect Ready:
// True, with reason HelmReleaseNotFound, while the account's HelmRelease
// does not exist. The account Secret is written all the same, owned by the
// CredentialAccount, and handed over to the HelmRelease when it is created
// (its owner reference and release UID; the password is kept), so that a
// chart reading the Secret when it first renders finds it. The account is
// Ready meanwhile: a Kustomization of accounts can be health-checked before
// the application's Kustomization, which dependsOn it, creates the release.
const ReleasePendingCondition string = "ReleasePending"

// AppliedCondition is of positive polarity and does not affect Ready: True
// only when every consumer of the account Secret credo observes (a
// HelmRelease through its valuesFrom, a CloudNativePG Cluster's managed
// role, a mariadb-operator User) is known to use the Secret's current
// verifier; False when one is known not to (it failed, or cannot apply
// it); Unknown otherwise, with a reason, never a guess. Its message names
// the time of the change (status.lastChange) it reflects.
const AppliedCondition string = "Applied"

// Reasons of the Applied condition.
const (
	// ReleaseReconciledReason (Applied=True): helm-controller handled the
	// reconcile credo requested after the Secret's current version, and the
	// release is Ready with its latest values deployed.
	ReleaseReconciledReason string = "ReleaseReconciled"

	// ReleaseReconcilePendingReason (Applied=Unknown, or False while the
	// release is suspended): helm-controller has not yet handled the
	// reconcile credo requested after the Secret's current version.
	ReleaseReconcilePendingReason string = "ReleaseReconcilePending"

	// ReleaseFailedReason (Applied=False): helm-controller handled the
	// requested reconcile and the release is not Ready; the message gives
	// helm-controller's Ready reason.
	ReleaseFailedReason string = "ReleaseFailed"

	// ValuesNotDeliveredReason (Applied=False): the account delivers
	// through valuesFrom, but the HelmRelease has no entry for its Secret
	// (a release applied from Git that was not given it: ManagedByGitOps),
	// so the engine never reads it.
	ValuesNotDeliveredReason string = "ValuesNotDelivered"

	// ValuesShadowedReason (Applied=False, DeliveryFailed, and a Warning on
	// the account and its HelmRelease): something other than the account's
	// valuesFrom entry may set its targetPath (another valuesFrom entry at
	// that path or one that overlaps it, the entry not being first, a
	// post-renderer that may rewrite what the chart renders), or the values
	// helm-controller deployed do not carry the account Secret's verifier
	// at that path. credo puts its entry back first and drops the other
	// entries at the path where it may edit the release.
	ValuesShadowedReason string = "ValuesShadowed"

	// RoleReconciledReason (Applied=True): the CloudNativePG Cluster reports
	// the role reconciled with the Secret's current resourceVersion.
	RoleReconciledReason string = "RoleReconciled"

	// RolePendingReason (Applied=Unknown): the CloudNativePG Cluster has not
	// reported the role reconciled with the Secret's current resourceVersion.
	RolePendingReason string = "RolePending"

	// RoleCannotReconcileReason (Applied=False): the CloudNativePG Cluster
	// lists the role in status.managedRolesStatus.cannotReconcile; the
	// message carries CloudNativePG's text, truncated.
	RoleCannotReconcileReason string = "RoleCannotReconcile"

	// UserReadyReason (Applied=True): the mariadb-operator User became Ready
	// at or after the Secret's last change.
	UserReadyReason string = "UserReady"

	// UserNotReadyReason (Applied=False): the mariadb-operator User is not
	// Ready.
	UserNotReadyReason string = "UserNotReady"

	// EngineDoesNotReportVersionReason (Applied=Unknown): the engine's
	// operator reports no version of the Secret it applied: a
	// mariadb-operator User that stayed Ready across the Secret's last
	// change may or may not have applied it.
	EngineDoesNotReportVersionReason string = "EngineDoesNotReportVersion"

	// ReleasePendingReason (Applied=Unknown): the account is delivered
	// through valuesFrom and its HelmRelease does not exist yet
	// (ReleasePending): nothing reads the verifier until it does.
	ReleasePendingReason string = "ReleasePending"

	// NotIssuedReason (Applied=Unknown): the account has no password yet
	// (origin NotIssued); there is nothing to apply.
	NotIssuedReason string = "NotIssued"

	// ObserveFailedReason (Applied=Unknown): credo could not read a consumer
	// of the Secret or request its reconcile (logged); observed again at the
	// next change of the account, its Secret, its release or a consumer, or
	// at its interval. Ready is not affected.
	ObserveFailedReason string = "ObserveFailed"

	// EngineNotObservedReason (Applied=Unknown): nothing credo observes
	// consumes the account Secret: no valuesFrom, and no CloudNativePG
	// Cluster or mariadb-operator User referencing it (or their CRDs were
	// not installed when the credential-controller started).
	EngineNotObservedReason string = "EngineNotObserved"
)

// Reasons of the CredentialAccount conditions.
const (
	// UnknownFormatReason (FormatRefused): no built-in format has the name.
	UnknownFormatReason string = "UnknownFormat"

	// UnsupportedFormatKindReason (FormatRefused): the format kind (Webhook)
	// is part of the API but not built yet.
	UnsupportedFormatKindReason string = "UnsupportedFormatKind"

	// PlatformPlaintextReason (FormatRefused): a platform account asks for
	// the plaintext format without spec.plaintext, which says that its
	// consumer needs the plaintext and whom it is delivered to.
	PlatformPlaintextReason string = "PlatformPlaintext"

	// PlaintextExposedReason (Stalled, on SecretFailed): a platform
	// account of format plaintext would put its password where someone
	// other than its consumers and the platform may read it (a Secret
	// read, a pod, an exec, a Flux object in the namespace), or may replace
	// the consumer's Secret of spec.plaintext.secretRef. The message
	// names the subject and the access; nothing is written, and a copy
	// written before is left as it is.
	PlaintextExposedReason string = "PlaintextExposed"

	// PlaintextSecretNotFoundReason (Reconciling, on DeliveryFailed): the
	// Secret spec.plaintext.secretRef names does not exist. Nothing is
	// created under its name: a chart may still render it.
	PlaintextSecretNotFoundReason string = "PlaintextSecretNotFound"

	// PlaintextSecretNotAdoptedReason (Reconciling, on DeliveryFailed):
	// the Secret spec.plaintext.secretRef names has not been adopted for
	// the account by `kubectl credo migrate`; its key is left as it is.
	PlaintextSecretNotAdoptedReason string = "PlaintextSecretNotAdopted"

	// NameCollisionReason (SecretFailed): a Secret credo did not create holds
	// the account Secret's name. It is never written.
	NameCollisionReason string = "NameCollision"

	// AccountCollisionReason (SecretFailed): two accounts of the release map
	// to the same Secret name. The account that holds the Secret keeps it
	// (else a platform account, else the oldest); the others are refused,
	// cannot be minted and delete nothing of the holder's.
	AccountCollisionReason string = "AccountCollision"

	// KeptPasswordCollisionReason (SecretFailed): the Secret that keeps a
	// platform account's password in the platform namespace belongs to
	// another account. It is never written.
	KeptPasswordCollisionReason string = "KeptPasswordCollision"

	// HelmReleaseNotFoundReason (ReleasePending=True, informational): the
	// release does not exist yet; the account Secret is written, owned by
	// the CredentialAccount, and handed over to the HelmRelease once its
	// creation is seen. Not a failure: the account is Ready.
	HelmReleaseNotFoundReason string = "HelmReleaseNotFound"

	// HelmReleaseDeletingReason (SecretFailed, waiting): the release is
	// being deleted, and its account Secret with it by garbage collection;
	// or the release is gone and the account, owned by it (an AccountSource
	// generated it), is going too. Nothing is written meanwhile. Waits on
	// the watch.
	HelmReleaseDeletingReason string = "HelmReleaseDeleting"

	// SecretDeletingReason (SecretFailed, waiting): a platform account's
	// Secret, still holding the kept password's verifier, is being deleted
	// (garbage collection, its release going); it is created again once gone.
	SecretDeletingReason string = "SecretDeleting"

	// WriteFailedReason (SecretFailed): the API server refused the write.
	WriteFailedReason string = "WriteFailed"

	// ReleaseSuspendedReason (DeliveryFailed): the HelmRelease is suspended;
	// the new verifier reaches the engine when it is resumed. Also a Warning
	// event, on the account and its HelmRelease, for each password minted or
	// revoked while the release is suspended.
	ReleaseSuspendedReason string = "ReleaseSuspended"

	// ManagedByGitOpsReason (DeliveryFailed): the HelmRelease is applied from
	// Git and an edit would be reverted; the message gives the valuesFrom
	// entry the HelmRelease in Git must carry.
	ManagedByGitOpsReason string = "ManagedByGitOps"

	// ValuesFromMissingReason (DeliveryFailed, Stalled, and a Warning event
	// on the transition): the HelmRelease's spec.valuesFrom is owned by
	// another writer (it matches the credential-controller's
	// --values-from-owner-selector, e.g. the platform's application
	// definitions), which does not list the account's entry; credo never
	// edits that list, and the message gives the entry the owner must list.
	ValuesFromMissingReason string = "ValuesFromMissing"

	// ValuesFromContestedReason (DeliveryFailed, Stalled, and a Warning
	// event on the transition): something else kept undoing what credo
	// wrote to the HelmRelease (its valuesFrom entry, or the platform-values
	// label), and credo stopped writing it rather than fight; the message
	// says how to make one writer own it.
	ValuesFromContestedReason string = "ValuesFromContested"
)

// Reasons of events.
const (
	// SecretCreatedReason (Normal): the account Secret was created, NotIssued
	// (or Generated for a platform account); before its release exists, owned
	// by the CredentialAccount.
	SecretCreatedReason string = "SecretCreated"

	// SecretHandedOverReason (Normal): the account Secret written before its
	// release existed was handed over to the HelmRelease (its owner
	// reference and release UID), its password kept.
	SecretHandedOverReason string = "SecretHandedOver"

	// PlaintextDeliveredReason (Normal): a platform plaintext was written
	// into the key spec.plaintext.secretRef names.
	PlaintextDeliveredReason string = "PlaintextDelivered"

	// RotatedReason (Normal): a platform account's password was rotated.
	RotatedReason string = "Rotated"

	// VerifierTamperedReason (Warning): a platform account's stored verifier
	// did not match the password credo keeps; it was repaired from the kept
	// password. The event names the last writer of the Secret's password.
	VerifierTamperedReason string = "VerifierTampered"

	// SecretReclaimedReason (Warning): the Secret at a platform account's
	// name was written by someone else (not credo, or claiming another
	// account); it was reclaimed with the verifier of the kept password. The
	// event names the last writer of its password.
	SecretReclaimedReason string = "SecretReclaimed"

	// KeptPasswordLostReason (Warning): the kept password of a platform
	// account was missing; a new one was generated, kept and stored.
	KeptPasswordLostReason string = "KeptPasswordLost"

	// ValuesFromUpdatedReason (Normal): the HelmRelease's valuesFrom gained
	// or lost the account's entry.
	ValuesFromUpdatedReason string = "ValuesFromUpdated"

	// EarlierReleaseSecretReason (Normal): the Secret at the account's name
	// was made by credo for an earlier HelmRelease of the release's name
	// (the application was deleted and made again); it was deleted, and is
	// made again, so nothing of the earlier application carries over.
	EarlierReleaseSecretReason string = "EarlierReleaseSecret"
)

// Reasons of the AccountSource conditions.
const (
	// UnsupportedSourceKindReason (Stalled): an entry's kind is part of the
	// API but not built yet (Webhook).
	UnsupportedSourceKindReason string = "UnsupportedSourceKind"

	// InvalidSelectorReason (Stalled): the releaseSelector cannot be parsed.
	InvalidSelectorReason string = "InvalidSelector"

	// NoReleasesMatchedReason (Ready=False): the rule selects no release.
	NoReleasesMatchedReason string = releasev1.NoReleasesMatchedReason
)

// ReleasesNotAppliedCondition (negative polarity, does not affect Ready) of
// an AccountSource: True while some selected releases do not have every
// account the source derives for them; see
// releasev1.ReleasesNotAppliedCondition. Each such release has a Warning
// event on its HelmRelease with one of the reasons below, which are, by
// precedence, the condition's reason; its message counts releases by
// reason and names none.
const ReleasesNotAppliedCondition string = releasev1.ReleasesNotAppliedCondition

// Reasons of the ReleasesNotApplied condition of an AccountSource and of
// the Warning events on the HelmReleases it concerns. A release's problem
// never makes the AccountSource not Ready: the values, chart source and
// name of a release are its author's (a tenant's) to write.
const (
	// AccountLimitExceededReason (ReleasesNotApplied=True, and a Warning
	// event on the HelmRelease): the release derives more accounts than one
	// release may have (--max-generated-accounts-per-release), or the
	// accounts it would add would take its namespace over the generated
	// accounts or the platform accounts (each keeps a password in the
	// platform namespace) one namespace may have
	// (--max-generated-accounts-per-namespace,
	// --max-platform-accounts-per-namespace). None of the accounts the
	// release would add is created (all or none); its existing accounts are
	// kept (over the per-release limit, kept as they are). Also when a
	// ResourceQuota of the namespace refuses an account (the API server
	// checks a quota account by account).
	AccountLimitExceededReason string = "AccountLimitExceeded"

	// AccountConflictReason (ReleasesNotApplied=True, and a Warning event on
	// the HelmRelease): an account exists under the name the source
	// derives, but the source did not create it for the same entry,
	// username and owner, or its format differs from the template's (format
	// and owner are immutable). It is neither adopted nor changed; delete it
	// to have the source create its own.
	AccountConflictReason string = "AccountConflict"

	// UsernameRefusedReason (ReleasesNotApplied=True, and a Warning event on
	// the HelmRelease): a release derives a username the source cannot give
	// an account: it maps (after the DNS mapping of account Secret names)
	// to the username of a platform entry or of another entry's account, or
	// it is not a valid username. The account is not created and the
	// account already holding the name is untouched; the release's other
	// accounts are kept and derived as usual.
	UsernameRefusedReason string = "UsernameRefused"

	// InvalidValuesReason (ReleasesNotApplied=True, and a Warning event on
	// the HelmRelease): a selected release's values have no map at the
	// entry's path; its accounts of that entry are kept as they are.
	InvalidValuesReason string = "InvalidValues"

	// ChartUnresolvedReason (ReleasesNotApplied=True, and a Warning event on
	// the HelmRelease): the chart of a release's spec.chartRef cannot be
	// resolved; what the rule made for it is kept.
	ChartUnresolvedReason string = releasev1.ChartUnresolvedReason
)
