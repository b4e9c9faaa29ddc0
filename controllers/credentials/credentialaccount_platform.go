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

package credentials

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/verifier"
)

// A platform account's plaintext is kept in the platform namespace, in a
// Secret that carries the account's UID (internal/account: the writer
// reads, writes and deletes it after checking that UID, never by name
// alone). account.DecidePlatformRepair decides whether the account Secret
// is repaired, rotated or reclaimed; this file reads what it needs, carries
// the decision out and raises its events; every write goes through the
// writer.

// reclaimPlatform takes back the Secret at a platform account's name that
// someone else wrote (a foreign field manager, or another account's UID on
// it), or that no update can repair: it holds the verifier of the kept
// password again, with a Warning naming its last writer, raised before the
// write so that a write that fails is reported too.
func (r *CredentialAccountReconciler) reclaimPlatform(ctx context.Context, w *account.Writer, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	k, err := w.KeptPassword(ctx, acct, cur.Annotations[r.AccountKeys.Rotate])
	if err != nil {
		return nil, r.refusal(acct, err)
	}
	stored, err := account.StoredValue(f, acct.Spec.Username, k.Password)
	if err != nil {
		return nil, r.refusal(acct, err)
	}
	metrics.VerifierTampered(acct.Namespace)
	r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.SecretReclaimedReason,
		"Secret %s %s (its password last written by %s); it is reclaimed with the verifier of the platform's kept password",
		cur.Name, unfitness(cur), lastWriter(cur, credv1.PasswordKey))
	if account.Frozen(cur) || !cur.DeletionTimestamp.IsZero() {
		s, err := w.Replace(ctx, acct, hr, cur, f, controllerIdentity)
		return r.created(acct, s, err)
	}
	return w.Reclaim(ctx, acct, hr, cur, stored, account.Record{Origin: credv1.OriginGenerated, By: controllerIdentity, Rotate: k.Rotate})
}

// unfitness says why a Secret at a platform account's name is reclaimed.
func unfitness(s *corev1.Secret) string {
	switch {
	case !s.DeletionTimestamp.IsZero():
		return "is being deleted"
	case ptr.Deref(s.Immutable, false):
		return "is immutable"
	case s.Type != corev1.SecretTypeBasicAuth:
		return fmt.Sprintf("is of type %s", s.Type)
	}
	return "is not this platform account's"
}

// checkPlatform keeps a platform account's stored verifier equal to the
// verifier of the kept password: it reads what the decision needs, lets
// account.DecidePlatformRepair decide, and carries the decision out. A
// rotation request the kept password does not answer (recorded with it,
// out of the tenant's reach), or a kept password gone, generates a new
// password; a stored value that does not match the kept one (written by
// someone else) is repaired from it, with a Warning naming its last
// writer. A Secret being deleted (its release going, garbage collection)
// is awaited while it holds the kept password's verifier, and replaced
// when it does not. It returns the Secret to go on with.
func (r *CredentialAccountReconciler) checkPlatform(ctx context.Context, w *account.Writer, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	kept, err := w.ReadKept(ctx, acct)
	if err != nil {
		return nil, r.refusal(acct, err)
	}
	state := account.PlatformState{
		KeptLost: kept == nil || len(kept.Data[credv1.PasswordKey]) == 0,
		Rotate:   acct.Spec.Rotate, SecretRotate: cur.Annotations[r.AccountKeys.Rotate],
		Deleting: !cur.DeletionTimestamp.IsZero(),
	}
	var k account.Kept
	if !state.KeptLost {
		if k, err = w.KeptOf(ctx, acct, kept, cur.Annotations[r.AccountKeys.Rotate]); err != nil {
			return nil, r.refusal(acct, err)
		}
		state.KeptRotate = k.Rotate
		state.Matches = verifier.Matches(f, acct.Spec.Username, k.Password, string(cur.Data[credv1.PasswordKey]))
	}
	switch account.DecidePlatformRepair(state) {
	case account.PlatformKeptLost:
		r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.KeptPasswordLostReason,
			"the kept password of %s is missing from %s; a new password is generated", cur.Name, r.PlatformNamespace)
		return r.rotatePlatform(ctx, w, acct, cur, f)
	case account.PlatformRotate:
		return r.rotatePlatform(ctx, w, acct, cur, f)
	case account.PlatformAwaitDeletion:
		return nil, reconciler.NewWaiting(credv1.SecretDeletingReason, "Secret %s is being deleted; it is created again once it is gone", cur.Name)
	case account.PlatformReclaim:
		return r.reclaimPlatform(ctx, w, acct, hr, cur, f)
	case account.PlatformInLine:
		return cur, nil
	case account.PlatformRecordRotation:
		return w.RecordRotation(ctx, acct, cur, k.Rotate)
	}
	// account.PlatformRepairVerifier
	stored, err := account.StoredValue(f, acct.Spec.Username, k.Password)
	if err != nil {
		return nil, r.refusal(acct, err)
	}
	metrics.VerifierTampered(acct.Namespace)
	r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.VerifierTamperedReason,
		"the stored password of Secret %s did not match the platform's kept password (last written by %s); it is repaired from the kept password",
		cur.Name, lastWriter(cur, credv1.PasswordKey))
	repaired, err := w.Store(ctx, acct, cur, stored, account.Record{Origin: credv1.OriginGenerated, By: controllerIdentity, Rotate: k.Rotate})
	if err != nil {
		return nil, fmt.Errorf("repairing Secret %s: %w", cur.Name, err)
	}
	return repaired, nil
}

// rotatePlatform gives a platform account a new password through the
// writer's password-write sequence: kept first, then its verifier written
// with the resourceVersion read as precondition.
func (r *CredentialAccountReconciler) rotatePlatform(ctx context.Context, w *account.Writer, acct *credv1.CredentialAccount, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	_, rotated, err := w.NewPassword(ctx, acct, cur, f, account.Record{Origin: credv1.OriginGenerated, By: controllerIdentity, Rotate: acct.Spec.Rotate})
	if err != nil {
		return nil, r.refusal(acct, err)
	}
	metrics.AccountRotated(acct.Namespace)
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.RotatedReason, eventActionAccount,
		"rotated the platform password of %s (rotate=%s)", cur.Name, acct.Spec.Rotate)
	return rotated, nil
}

// lastWriter names the field manager that last wrote data[key] of s, from
// its managed fields, with the operation and time; "unknown" when none
// records it.
func lastWriter(s *corev1.Secret, key string) string {
	field := fmt.Sprintf(`"f:%s"`, key)
	var last *metav1.ManagedFieldsEntry
	for i := range s.ManagedFields {
		mf := &s.ManagedFields[i]
		if mf.FieldsV1 == nil || !strings.Contains(mf.FieldsV1.GetRawString(), `"f:data"`) || !strings.Contains(mf.FieldsV1.GetRawString(), field) {
			continue
		}
		if last == nil || (mf.Time != nil && (last.Time == nil || !mf.Time.Before(last.Time))) {
			last = mf
		}
	}
	if last == nil {
		return "unknown"
	}
	at := "an unknown time"
	if last.Time != nil {
		at = last.Time.UTC().Format("2006-01-02T15:04:05Z")
	}
	return fmt.Sprintf("%q (%s at %s)", last.Manager, last.Operation, at)
}
