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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/verifier"
)

// A platform account's plaintext is kept in the platform namespace, in a
// Secret that carries the account's UID: every read, write and delete of it
// checks that UID, never the name alone (derived from namespace, release and
// username, it is shared by every account whose username maps to it).

// PlatformSecretName is where a platform account's plaintext is kept, in
// the platform namespace: <namespace>.<account secret name>.
func PlatformSecretName(acct *credv1.CredentialAccount) string {
	name := acct.Namespace + "." + account.SecretName(acct.Spec.Release, acct.Spec.Username)
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:230], "-.") + "-" + hex.EncodeToString(sum[:])[:12] + credv1.AccountSecretSuffix
}

// keptLabel is the account label value of a kept password.
func keptLabel(acct *credv1.CredentialAccount) string {
	return labelValue(acct.Namespace + "." + acct.Name)
}

// readKept returns the kept password Secret of acct, nil when there is none.
// A kept Secret of another account is a KeptPasswordCollision; one written
// before UIDs were recorded belongs to acct when its label names acct.
func (r *CredentialAccountReconciler) readKept(ctx context.Context, acct *credv1.CredentialAccount) (*corev1.Secret, error) {
	kept := &corev1.Secret{}
	key := client.ObjectKey{Namespace: r.PlatformNamespace, Name: PlatformSecretName(acct)}
	if err := r.APIReader.Get(ctx, key, kept); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the kept platform password %s/%s: %w", key.Namespace, key.Name, err)
	}
	if r.AccountKeys.BelongsTo(kept, acct.UID) ||
		(!r.AccountKeys.Claimed(kept) && kept.Labels[r.AccountKeys.Account] == keptLabel(acct)) {
		return kept, nil
	}
	return nil, reconciler.NewStalling(credv1.KeptPasswordCollisionReason,
		"the kept password %s/%s belongs to another CredentialAccount; it is left untouched", key.Namespace, key.Name)
}

// keepPlatformPassword writes a platform account's plaintext into the
// platform namespace, which no tenant can read, with the spec.rotate value
// it answers: created when missing, otherwise updated conditionally on the
// version read, and only when it belongs to acct. The rotate value is kept
// there, out of the tenant's reach, not only on the account Secret.
func (r *CredentialAccountReconciler) keepPlatformPassword(ctx context.Context, acct *credv1.CredentialAccount, password, rotate string) error {
	kept, err := r.readKept(ctx, acct)
	if err != nil {
		return err
	}
	create := kept == nil
	if create {
		kept = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: PlatformSecretName(acct), Namespace: r.PlatformNamespace}}
	}
	if kept.Labels == nil {
		kept.Labels = map[string]string{}
	}
	kept.Labels[r.AccountKeys.Account] = keptLabel(acct)
	r.AccountKeys.Stamp(kept, acct.UID)
	setRotate(kept, r.AccountKeys.Rotate, rotate)
	kept.Type = corev1.SecretTypeBasicAuth
	kept.Data = map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username), credv1.PasswordKey: []byte(password)}
	if create {
		err = r.Create(ctx, kept, client.FieldOwner(CredentialFieldOwner))
	} else {
		err = r.Update(ctx, kept, client.FieldOwner(CredentialFieldOwner))
	}
	if err != nil {
		return fmt.Errorf("keeping the platform password in %s/%s: %w", r.PlatformNamespace, kept.Name, err)
	}
	return nil
}

// setRotate records the spec.rotate value a password answers; none removes it.
func setRotate(s *corev1.Secret, key, rotate string) {
	if rotate == "" {
		delete(s.Annotations, key)
		return
	}
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, key, rotate)
}

// platformSecret is a platform account's kept password and the spec.rotate
// value it answers.
type platformSecret struct {
	password, rotate string
}

// platformPassword returns the kept password of acct, or keeps and returns
// a new one (answering the current spec.rotate) when there is none. legacy
// is the rotate value a kept password written before it was recorded there
// answers: the account Secret's.
func (r *CredentialAccountReconciler) platformPassword(ctx context.Context, acct *credv1.CredentialAccount, legacy string) (platformSecret, error) {
	kept, err := r.readKept(ctx, acct)
	if err != nil {
		return platformSecret{}, err
	}
	if kept != nil && len(kept.Data[credv1.PasswordKey]) > 0 {
		return r.keptSecret(ctx, acct, kept, legacy)
	}
	password, err := account.GeneratePassword()
	if err != nil {
		return platformSecret{}, err
	}
	if err := r.keepPlatformPassword(ctx, acct, password, acct.Spec.Rotate); err != nil {
		return platformSecret{}, err
	}
	return platformSecret{password: password, rotate: acct.Spec.Rotate}, nil
}

// keptSecret reads a kept password Secret of acct, recording acct's UID
// and the rotate value it answers (legacy, the account Secret's) on one
// written before they were recorded there.
func (r *CredentialAccountReconciler) keptSecret(ctx context.Context, acct *credv1.CredentialAccount, kept *corev1.Secret, legacy string) (platformSecret, error) {
	k := platformSecret{password: string(kept.Data[credv1.PasswordKey]), rotate: kept.Annotations[r.AccountKeys.Rotate]}
	if !r.AccountKeys.Claimed(kept) {
		k.rotate = legacy
		if err := r.keepPlatformPassword(ctx, acct, k.password, k.rotate); err != nil {
			return platformSecret{}, err
		}
	}
	return k, nil
}

// reclaimPlatform takes back the Secret at a platform account's name that
// someone else wrote (a foreign field manager, or another account's UID on
// it), or that no update can repair: it holds the verifier of the kept
// password again, with a Warning naming its last writer, raised before the
// write so that a write that fails is reported too.
func (r *CredentialAccountReconciler) reclaimPlatform(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	k, err := r.platformPassword(ctx, acct, cur.Annotations[r.AccountKeys.Rotate])
	if err != nil {
		return nil, err
	}
	stored, err := f.Verifier(acct.Spec.Username, k.password)
	if err != nil {
		return nil, reconciler.NewStalling(credv1.UnknownFormatReason, "format %s: %s", f.Name(), err.Error())
	}
	metrics.VerifierTampered(acct.Namespace)
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeWarning, credv1.SecretReclaimedReason, eventActionAccount,
		"Secret %s %s (its password last written by %s); it is reclaimed with the verifier of the platform's kept password",
		cur.Name, unfitness(cur), lastWriter(cur, credv1.PasswordKey))
	if frozen(cur) || !cur.DeletionTimestamp.IsZero() {
		return r.replacePlatform(ctx, acct, hr, cur, f)
	}
	cur.Data = map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username)}
	r.setPassword(acct, cur, stored, credv1.OriginGenerated)
	setRotate(cur, r.AccountKeys.Rotate, k.rotate)
	r.stampMetadata(acct, hr, cur)
	if err := r.Update(ctx, cur, client.FieldOwner(CredentialFieldOwner)); err != nil {
		return nil, fmt.Errorf("reclaiming Secret %s: %w", cur.Name, err)
	}
	return cur, nil
}

// frozen reports an account Secret no update can repair: immutable, or of
// another type than kubernetes.io/basic-auth.
func frozen(s *corev1.Secret) bool {
	return ptr.Deref(s.Immutable, false) || s.Type != corev1.SecretTypeBasicAuth
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

// replacePlatform deletes a Secret at a platform account's name that no
// update can repair, its finalizers removed first so that the deletion
// completes, with a UID precondition, and creates it again from the kept
// password.
func (r *CredentialAccountReconciler) replacePlatform(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	if len(cur.Finalizers) > 0 {
		before := cur.DeepCopy()
		cur.Finalizers = nil
		if err := r.Patch(ctx, cur, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("removing the finalizers of Secret %s to replace it: %w", cur.Name, err)
		}
	}
	if err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("deleting Secret %s to replace it: %w", cur.Name, err)
	}
	return r.createSecret(ctx, acct, hr, f, cur.Name)
}

// deleteKept deletes the kept password of acct if it carries acct's UID,
// with a UID precondition.
func (r *CredentialAccountReconciler) deleteKept(ctx context.Context, acct *credv1.CredentialAccount) error {
	kept := &corev1.Secret{}
	key := client.ObjectKey{Namespace: r.PlatformNamespace, Name: PlatformSecretName(acct)}
	if err := r.APIReader.Get(ctx, key, kept); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !r.AccountKeys.BelongsTo(kept, acct.UID) {
		return nil
	}
	if err := r.Delete(ctx, kept, client.Preconditions{UID: &kept.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the kept platform password: %w", err)
	}
	return nil
}

// checkPlatform keeps a platform account's stored verifier equal to the
// verifier of the kept password. A rotation request the kept password does
// not answer (recorded with it, out of the tenant's reach), or a kept
// password gone, generates a new password; a stored value that does not
// match the kept one (written by someone else) is repaired from it, with a
// Warning naming its last writer. A Secret being deleted (its release
// going, garbage collection) is awaited while it holds the kept password's
// verifier, and replaced when it does not. It returns the Secret to go on
// with.
func (r *CredentialAccountReconciler) checkPlatform(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format) (*corev1.Secret, error) {
	kept, err := r.readKept(ctx, acct)
	if err != nil {
		return nil, err
	}
	if kept == nil || len(kept.Data[credv1.PasswordKey]) == 0 {
		r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeWarning, credv1.KeptPasswordLostReason, eventActionAccount,
			"the kept password of %s is missing from %s; a new password is generated", cur.Name, r.PlatformNamespace)
		return cur, r.rotatePlatform(ctx, acct, cur, f)
	}
	k, err := r.keptSecret(ctx, acct, kept, cur.Annotations[r.AccountKeys.Rotate])
	if err != nil {
		return nil, err
	}
	if acct.Spec.Rotate != "" && acct.Spec.Rotate != k.rotate {
		return cur, r.rotatePlatform(ctx, acct, cur, f)
	}
	matches := verifier.Matches(f, acct.Spec.Username, k.password, string(cur.Data[credv1.PasswordKey]))
	if !cur.DeletionTimestamp.IsZero() {
		if matches {
			return nil, reconciler.NewWaiting(credv1.SecretDeletingReason, "Secret %s is being deleted; it is created again once it is gone", cur.Name)
		}
		return r.reclaimPlatform(ctx, acct, hr, cur, f)
	}
	if matches && cur.Annotations[r.AccountKeys.Rotate] == k.rotate {
		return cur, nil
	}
	if matches {
		setRotate(cur, r.AccountKeys.Rotate, k.rotate)
		if err := r.Update(ctx, cur, client.FieldOwner(CredentialFieldOwner)); err != nil {
			return nil, fmt.Errorf("recording the rotation of Secret %s: %w", cur.Name, err)
		}
		return cur, nil
	}
	stored, err := f.Verifier(acct.Spec.Username, k.password)
	if err != nil {
		return nil, reconciler.NewStalling(credv1.UnknownFormatReason, "format %s: %s", f.Name(), err.Error())
	}
	metrics.VerifierTampered(acct.Namespace)
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeWarning, credv1.VerifierTamperedReason, eventActionAccount,
		"the stored password of Secret %s did not match the platform's kept password (last written by %s); it is repaired from the kept password",
		cur.Name, lastWriter(cur, credv1.PasswordKey))
	r.setPassword(acct, cur, stored, credv1.OriginGenerated)
	setRotate(cur, r.AccountKeys.Rotate, k.rotate)
	if err := r.Update(ctx, cur, client.FieldOwner(CredentialFieldOwner)); err != nil {
		return nil, fmt.Errorf("repairing Secret %s: %w", cur.Name, err)
	}
	return cur, nil
}

// rotatePlatform generates a new password for a platform account, keeps it,
// and writes its verifier with the resourceVersion read as precondition.
func (r *CredentialAccountReconciler) rotatePlatform(ctx context.Context, acct *credv1.CredentialAccount, cur *corev1.Secret, f verifier.Format) error {
	password, err := account.GeneratePassword()
	if err != nil {
		return err
	}
	stored, err := f.Verifier(acct.Spec.Username, password)
	if err != nil {
		return reconciler.NewStalling(credv1.UnknownFormatReason, "format %s: %s", f.Name(), err.Error())
	}
	// Keep the new password first: a lost account write leaves a kept
	// password the next reconcile writes the verifier of (it no longer
	// matches), never an account nobody can recover.
	if err := r.keepPlatformPassword(ctx, acct, password, acct.Spec.Rotate); err != nil {
		return err
	}
	r.setPassword(acct, cur, stored, credv1.OriginGenerated)
	setRotate(cur, r.AccountKeys.Rotate, acct.Spec.Rotate)
	if err := r.Update(ctx, cur, client.FieldOwner(CredentialFieldOwner)); err != nil {
		return fmt.Errorf("rotating Secret %s: %w", cur.Name, err)
	}
	metrics.AccountRotated(acct.Namespace)
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.RotatedReason, eventActionAccount,
		"rotated the platform password of %s (rotate=%s)", cur.Name, acct.Spec.Rotate)
	return nil
}

// setPassword stores a verifier in the account Secret cur and records the
// operation; the caller writes cur.
func (r *CredentialAccountReconciler) setPassword(acct *credv1.CredentialAccount, cur *corev1.Secret, stored string, origin credv1.Origin) {
	if cur.Data == nil {
		cur.Data = map[string][]byte{}
	}
	cur.Data[credv1.PasswordKey] = []byte(stored)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	r.AccountKeys.Stamp(cur, acct.UID)
	cur.Annotations[r.AccountKeys.Origin] = string(origin)
	cur.Annotations[r.AccountKeys.History] = account.ParseHistory(cur.Annotations[r.AccountKeys.History]).
		Append(origin, controllerIdentity, r.now()).String()
}

// lastWriter names the field manager that last wrote data[key] of s, from
// its managed fields, with the operation and time; "unknown" when none
// records it.
func lastWriter(s *corev1.Secret, key string) string {
	field := fmt.Sprintf(`"f:%s"`, key)
	var last *metav1.ManagedFieldsEntry
	for i := range s.ManagedFields {
		mf := &s.ManagedFields[i]
		if mf.FieldsV1 == nil || !strings.Contains(string(mf.FieldsV1.Raw), `"f:data"`) || !strings.Contains(string(mf.FieldsV1.Raw), field) {
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
