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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// A platform account's plaintext is kept in the platform namespace, in a
// Secret that carries the account's UID: every read, write and delete of it
// checks that UID, never the name alone (derived from namespace, release and
// username, it is shared by every account whose username maps to it).

// ReadKept returns the kept password Secret of acct, nil when there is none,
// and ErrKeptClaimed when the one of its name belongs to another account.
func (w *Writer) ReadKept(ctx context.Context, acct *credv1.CredentialAccount) (*corev1.Secret, error) {
	if w.PlatformNamespace == "" {
		return nil, errNoPlatformNamespace
	}
	kept, err := w.read(ctx, client.ObjectKey{Namespace: w.PlatformNamespace, Name: KeptSecretName(acct)})
	if err != nil || kept == nil {
		return nil, err
	}
	if err := w.Keys.keptGuard(kept, acct); err != nil {
		return nil, err
	}
	if w.Binding != nil && w.Keys.earlierBinding(kept, w.Binding) {
		// The application was deleted and made again under its name: its
		// password is never the earlier one's.
		return nil, w.deleteVersion(ctx, kept)
	}
	return kept, nil
}

// keptGuard is the ownership check of a kept password: credo wrote it, and
// it carries acct's UID, or (written before UIDs were recorded) no UID and
// the label of acct.
func (k Keys) keptGuard(kept *corev1.Secret, acct *credv1.CredentialAccount) error {
	if ManagedByCredo(kept) &&
		(k.BelongsTo(kept, acct.UID) || (!k.Claimed(kept) && kept.Labels[k.Account] == KeptLabel(acct))) {
		return nil
	}
	return fmt.Errorf("%s/%s: %w", kept.Namespace, kept.Name, ErrKeptClaimed)
}

// Keep writes a platform account's plaintext into the platform namespace,
// which no tenant can read, with the spec.rotate value it answers (kept
// there, out of the tenant's reach, not only on the account Secret):
// created when missing, otherwise, when it belongs to acct, applied on the
// version read.
func (w *Writer) Keep(ctx context.Context, acct *credv1.CredentialAccount, password, rotate string) error {
	cur, err := w.ReadKept(ctx, acct)
	if err != nil {
		return err
	}
	next := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: KeptSecretName(acct), Namespace: w.PlatformNamespace},
	}
	if cur != nil {
		if next, err = ownPart(cur); err != nil {
			return err
		}
	}
	w.keptContent(next, cur, acct, password, rotate)
	if cur == nil {
		err = w.create(ctx, next)
	} else {
		_, err = w.apply(ctx, next)
	}
	if err != nil {
		return fmt.Errorf("keeping the platform password in %s: %w", w.PlatformNamespace, err)
	}
	return nil
}

// keptContent sets on s, the kept password to write over cur (nil when
// there is none), everything a kept password holds.
func (w *Writer) keptContent(s, cur *corev1.Secret, acct *credv1.CredentialAccount, password, rotate string) {
	w.Keys.Stamp(s, acct.UID)
	if w.Binding != nil {
		w.Keys.stampBinding(s, w.Binding)
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[w.Keys.Account] = KeptLabel(acct)
	var were map[string]string
	if cur != nil {
		were = cur.Annotations
	}
	setRotate(s.Annotations, were, w.Keys.Rotate, rotate)
	s.Type = corev1.SecretTypeBasicAuth
	s.Data = map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username), credv1.PasswordKey: []byte(password)}
}

// Kept is a platform account's kept password and the spec.rotate value it
// answers.
type Kept struct {
	// Password is the plaintext.
	Password string
	// Rotate is the spec.rotate value it answers.
	Rotate string
}

// KeptPassword returns acct's kept password, or keeps and returns a new one
// (answering acct's spec.rotate) when there is none. legacy is the rotate
// value a kept password written before it was recorded there answers: the
// account Secret's.
func (w *Writer) KeptPassword(ctx context.Context, acct *credv1.CredentialAccount, legacy string) (Kept, error) {
	kept, err := w.ReadKept(ctx, acct)
	if err != nil {
		return Kept{}, err
	}
	if kept != nil && len(kept.Data[credv1.PasswordKey]) > 0 {
		return w.KeptOf(ctx, acct, kept, legacy)
	}
	password, err := GeneratePassword()
	if err != nil {
		return Kept{}, err
	}
	if err := w.Keep(ctx, acct, password, acct.Spec.Rotate); err != nil {
		return Kept{}, err
	}
	return Kept{Password: password, Rotate: acct.Spec.Rotate}, nil
}

// KeptOf reads the kept password Secret kept of acct (as ReadKept returned
// it), recording acct's UID and the rotate value it answers (legacy, the
// account Secret's) on one written before they were recorded there.
func (w *Writer) KeptOf(ctx context.Context, acct *credv1.CredentialAccount, kept *corev1.Secret, legacy string) (Kept, error) {
	k := Kept{Password: string(kept.Data[credv1.PasswordKey]), Rotate: kept.Annotations[w.Keys.Rotate]}
	if !w.Keys.Claimed(kept) {
		k.Rotate = legacy
	} else if w.Binding == nil || w.Keys.boundTo(kept, w.Binding) {
		return k, nil
	}
	// Written before the UID (or the binding) was recorded there.
	if err := w.Keep(ctx, acct, k.Password, k.Rotate); err != nil {
		return Kept{}, err
	}
	return k, nil
}

// deleteVersion deletes the Secret kept (a kept password, or a record the
// sweep found), as read: a Secret replaced or written since (another UID or
// resourceVersion) is left alone.
func (w *Writer) deleteVersion(ctx context.Context, kept metav1.Object) error {
	uid, rv := kept.GetUID(), kept.GetResourceVersion()
	obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kept.GetNamespace(), Name: kept.GetName()}}
	if err := w.Client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Secret %s/%s: %w", kept.GetNamespace(), kept.GetName(), err)
	}
	return nil
}

// DeleteRecord deletes a record the sweep found orphaned (its account,
// namespace or release gone): an account Secret or a kept password, read
// as metadata with its managed fields. Only one credo wrote and that
// carries the account label, and only the version read; deleted reports
// whether it was one.
func (w *Writer) DeleteRecord(ctx context.Context, s metav1.Object) (deleted bool, err error) {
	if _, labelled := s.GetLabels()[w.Keys.Account]; !labelled || !ManagedByCredo(s) {
		return false, nil
	}
	return true, w.deleteVersion(ctx, s)
}
