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
	"time"

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

// AccountKeys are the annotation and label keys of account Secrets.
type AccountKeys = account.Keys

// NewAccountKeys returns the keys under domain.
func NewAccountKeys(domain string) AccountKeys { return account.NewKeys(domain) }

// helmWatchLabel makes helm-controller reconcile a HelmRelease when a
// Secret its valuesFrom references changes.
const helmWatchLabel = "reconcile.fluxcd.io/watch"

// CredentialFieldOwner is the field manager of everything the credential-controller writes.
const CredentialFieldOwner = account.FieldOwner

// controllerIdentity is the "by" of operations the controller performs itself.
const controllerIdentity = "credo-credential-controller"

// ensureSecret creates the account Secret (NotIssued, or Generated for a
// platform account), or brings the metadata of an existing one of this
// account up to date without touching its password; a platform account's
// stored verifier is checked against the kept password. A foreign Secret,
// or one that belongs to another account, is never written.
func (r *CredentialAccountReconciler) ensureSecret(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, f verifier.Format) (*corev1.Secret, error) {
	name := account.SecretName(acct.Spec.Release, acct.Spec.Username)
	var cur corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: name}, &cur)
	switch {
	case apierrors.IsNotFound(err):
		return r.createSecret(ctx, acct, hr, f, name)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	foreign, claimed := !ownedBy(&cur, CredentialFieldOwner), !r.holds(acct, &cur)
	if (foreign || claimed || frozen(&cur)) && acct.GetOwner() == credv1.OwnerPlatform {
		// The platform account keeps the Secret of its name (it passed the
		// collision check): whatever was written there in the tenant's
		// namespace is replaced by the verifier of the kept password.
		return r.reclaimPlatform(ctx, acct, hr, &cur, f)
	}
	if foreign {
		return nil, reconciler.NewStalling(credv1.NameCollisionReason,
			"Secret %s exists and was not created by credo; it is left untouched", name)
	}
	if claimed {
		return nil, reconciler.NewStalling(credv1.AccountCollisionReason,
			"Secret %s belongs to another CredentialAccount; it is left untouched", name)
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		checked, err := r.checkPlatform(ctx, acct, hr, &cur, f)
		if err != nil {
			return nil, err
		}
		cur = *checked
	}
	next := cur.DeepCopy()
	r.stampMetadata(acct, hr, next)
	if metadataEqual(&cur, next, r.AccountKeys.AccountUID) {
		return &cur, nil
	}
	if err := r.Update(ctx, next, client.FieldOwner(CredentialFieldOwner)); err != nil {
		return nil, fmt.Errorf("updating Secret %s: %w", name, err)
	}
	return next, nil
}

// holds reports whether the account Secret s belongs to acct: it carries
// acct's UID, or (a Secret written before UIDs were recorded) no UID and the
// account label of acct's name, in which case stampMetadata records the UID.
func (r *CredentialAccountReconciler) holds(acct *credv1.CredentialAccount, s *corev1.Secret) bool {
	if r.AccountKeys.Claimed(s) {
		return r.AccountKeys.BelongsTo(s, acct.UID)
	}
	return s.Labels[r.AccountKeys.Account] == labelValue(acct.Name)
}

func (r *CredentialAccountReconciler) createSecret(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, f verifier.Format, name string) (*corev1.Secret, error) {
	origin, rotate := credv1.OriginNotIssued, ""
	password, err := account.GeneratePassword()
	if err != nil {
		return nil, err
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		origin = credv1.OriginGenerated
		// A Secret deleted by someone else comes back with the kept password.
		k, err := r.platformPassword(ctx, acct, "")
		if err != nil {
			return nil, err
		}
		password, rotate = k.password, k.rotate
	}
	stored, err := f.Verifier(acct.Spec.Username, password)
	if err != nil {
		return nil, reconciler.NewStalling(credv1.UnknownFormatReason, "format %s: %s", f.Name(), err.Error())
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: acct.Namespace},
		Type:       corev1.SecretTypeBasicAuth,
		Data:       map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username), credv1.PasswordKey: []byte(stored)},
	}
	s.Annotations = map[string]string{
		r.AccountKeys.Origin:  string(origin),
		r.AccountKeys.History: account.History(nil).Append(origin, controllerIdentity, r.now()).String(),
	}
	r.stampMetadata(acct, hr, s)
	// The rotation request the kept password answers (a new one answers
	// the current request).
	setRotate(s, r.AccountKeys.Rotate, rotate)
	if err := r.Create(ctx, s, client.FieldOwner(CredentialFieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) && acct.GetOwner() == credv1.OwnerPlatform {
			// Still being deleted, or planted meanwhile: the next attempt reclaims it.
			return nil, fmt.Errorf("creating Secret %s: it exists again; retrying", name)
		}
		if apierrors.IsAlreadyExists(err) {
			return nil, reconciler.NewStalling(credv1.NameCollisionReason, "Secret %s was created by someone else", name)
		}
		return nil, fmt.Errorf("creating Secret %s: %w", name, err)
	}
	metrics.AccountSecretCreated(acct.Namespace)
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.SecretCreatedReason, eventActionAccount,
		"created Secret %s (%s)", name, origin)
	return s, nil
}

// stampMetadata sets what credo owns on an account Secret besides its data
// and its record: labels, the account's UID and the owner reference to the
// HelmRelease.
func (r *CredentialAccountReconciler) stampMetadata(acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, s *corev1.Secret) {
	r.AccountKeys.Stamp(s, acct.UID)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	for k, v := range acct.Spec.SecretLabels {
		s.Labels[k] = v
	}
	s.Labels[r.AccountKeys.Account] = labelValue(acct.Name)
	if acct.Spec.ValuesFrom != nil {
		s.Labels[helmWatchLabel] = "Enabled"
	}
	s.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind,
		Name: hr.Name, UID: hr.UID, BlockOwnerDeletion: ptr.To(false),
	}}
}

func metadataEqual(a, b *corev1.Secret, uidKey string) bool {
	if len(a.Labels) != len(b.Labels) || len(a.OwnerReferences) != len(b.OwnerReferences) ||
		a.Annotations[uidKey] != b.Annotations[uidKey] {
		return false
	}
	for k, v := range b.Labels {
		if a.Labels[k] != v {
			return false
		}
	}
	for i := range a.OwnerReferences {
		if a.OwnerReferences[i].UID != b.OwnerReferences[i].UID {
			return false
		}
	}
	return true
}

// ownedBy reports whether a field manager has written the object.
func ownedBy(o metav1.Object, manager string) bool {
	for _, mf := range o.GetManagedFields() {
		if mf.Manager == manager {
			return true
		}
	}
	return false
}

func (r *CredentialAccountReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// labelValue fits a name into a label value (63 characters), replacing the
// tail of a longer one by a hash.
func labelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:50], "-_.") + "-" + hex.EncodeToString(sum[:])[:12]
}
