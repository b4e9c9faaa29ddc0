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

package account

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// HelmWatchLabel makes helm-controller reconcile a HelmRelease when a
// Secret its valuesFrom references changes.
const HelmWatchLabel = "reconcile.fluxcd.io/watch"

// Create creates acct's account Secret, owner-referenced to hr, or to acct
// while there is no release (hr nil; awaiting.go): for a tenant account
// the verifier of a password nobody keeps (NotIssued), for a platform
// account the verifier of its kept password (Generated; a new one is kept
// first when there is none). Create, never apply: a Secret of the name
// created since the read fails it with ErrExists.
func (w *Writer) Create(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, f verifier.Format, by string) (*corev1.Secret, error) {
	rec := Record{Origin: credv1.OriginNotIssued, By: by}
	password, err := GeneratePassword()
	if err != nil {
		return nil, err
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		// A Secret deleted by someone else comes back with the kept password.
		k, err := w.KeptPassword(ctx, acct, "")
		if err != nil {
			return nil, err
		}
		password, rec.Origin, rec.Rotate = k.Password, credv1.OriginGenerated, k.Rotate
	}
	stored, err := storedValue(f, acct.Spec.Username, password)
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: acct.SecretName(), Namespace: acct.Namespace,
			Annotations: map[string]string{}},
		Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username)},
	}
	w.record(s, &corev1.Secret{}, acct, stored, rec)
	w.Keys.stampMetadata(s, acct, hr)
	if err := w.create(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// SetMetadata brings what credo owns of acct's account Secret cur besides
// its data and its record up to date (labels, the account's UID, the owner
// reference to hr, or to acct while there is no release) without touching
// the password, and returns the Secret to go on with. The guard adopts a
// Secret credo wrote before UIDs were recorded. Nothing is written when
// all is current; otherwise an apply on cur's version, or, when cur holds
// an owner reference that is not the one wanted (which an apply cannot
// remove when another manager set it: the account's, when the release
// has come since the Secret was written), an update replacing them, under
// the same precondition.
func (w *Writer) SetMetadata(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret) (*corev1.Secret, error) {
	if err := w.Keys.Guard(cur, acct, true); err != nil {
		return nil, fmt.Errorf("Secret %s: %w", cur.Name, err)
	}
	next := cur.DeepCopy()
	w.Keys.stampMetadata(next, acct, hr)
	if metadataEqual(cur, next, w.Keys.AccountUID, w.Keys.AwaitingRelease()) {
		return cur, nil
	}
	if len(cur.OwnerReferences) > 0 && !ownedOnlyBy(cur, next.OwnerReferences[0].UID) {
		if err := w.Client.Update(ctx, next, client.FieldOwner(FieldOwner)); err != nil {
			return nil, fmt.Errorf("updating Secret %s: %w", cur.Name, err)
		}
		return next, nil
	}
	part, err := ownPart(cur)
	if err != nil {
		return nil, err
	}
	w.Keys.stampMetadata(part, acct, hr)
	written, err := w.apply(ctx, part)
	if err != nil {
		return nil, fmt.Errorf("updating Secret %s: %w", cur.Name, err)
	}
	return written, nil
}

// RecordRotation records on acct's account Secret cur the spec.rotate
// value its password answers, and nothing else.
func (w *Writer) RecordRotation(ctx context.Context, acct *credv1.CredentialAccount, cur *corev1.Secret, rotate string) (*corev1.Secret, error) {
	if err := w.Keys.Guard(cur, acct, false); err != nil {
		return nil, fmt.Errorf("Secret %s: %w", cur.Name, err)
	}
	next, err := ownPart(cur)
	if err != nil {
		return nil, err
	}
	setRotate(next.Annotations, cur.Annotations, w.Keys.Rotate, rotate)
	written, err := w.apply(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("recording the rotation of Secret %s: %w", cur.Name, err)
	}
	return written, nil
}

// stampMetadata sets what credo owns on an account Secret besides its data
// and its record: labels, the account's UID and the owner reference to the
// HelmRelease hr, or, while there is none (hr nil), to the account.
func (k Keys) stampMetadata(s *corev1.Secret, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease) {
	k.Stamp(s, acct.UID)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	for key, v := range acct.Spec.SecretLabels {
		s.Labels[key] = v
	}
	s.Labels[k.Account] = LabelValue(acct.Name)
	if acct.Spec.ValuesFrom != nil {
		s.Labels[HelmWatchLabel] = "Enabled"
	}
	k.ownership(s, acct, hr)
}

// ownedOnlyBy reports whether every owner reference of s is to the owner uid.
func ownedOnlyBy(s *corev1.Secret, uid types.UID) bool {
	for _, ref := range s.OwnerReferences {
		if ref.UID != uid {
			return false
		}
	}
	return true
}

// metadataEqual reports whether a and b carry the same labels, owners and
// annotations of keys.
func metadataEqual(a, b *corev1.Secret, keys ...string) bool {
	if len(a.Labels) != len(b.Labels) || len(a.OwnerReferences) != len(b.OwnerReferences) {
		return false
	}
	for _, k := range keys {
		va, oka := a.Annotations[k]
		vb, okb := b.Annotations[k]
		if oka != okb || va != vb {
			return false
		}
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
