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
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// A platform account always keeps the Secret of its name (the controller
// checked that no other platform account maps to it): whatever was written
// there in the tenant's namespace is replaced by the verifier of the kept
// password. Reclaim and Replace are the only writes over a Secret the guard
// refuses, and only for a platform account; what they write carries credo's
// field manager and the account's UID.

// errNotPlatform refuses a reclaim for a tenant account.
var errNotPlatform = errors.New("only a platform account reclaims a Secret")

// StoredValue is what an account Secret stores for password in format f:
// its verifier, or the plaintext for the plaintext format. Its error is a
// *FormatError.
func StoredValue(f verifier.Format, username, password string) (string, error) {
	return storedValue(f, username, password)
}

// Frozen reports an account Secret no update can repair: immutable, or of
// another type than kubernetes.io/basic-auth. A platform account replaces
// it (Replace), as one being deleted.
func Frozen(s *corev1.Secret) bool {
	return ptr.Deref(s.Immutable, false) || s.Type != corev1.SecretTypeBasicAuth
}

// Reclaim takes back, for the platform account acct, the Secret cur at its
// name that someone else wrote (a foreign field manager, another account's
// UID on it): it holds the username and stored (the verifier of the kept
// password) alone, with rec recorded, and credo's metadata. An update, not
// an apply (an apply cannot remove the keys another manager wrote),
// conditional on cur's resourceVersion.
func (w *Writer) Reclaim(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, stored string, rec Record) (*corev1.Secret, error) {
	if acct.GetOwner() != credv1.OwnerPlatform {
		return nil, fmt.Errorf("Secret %s: %w", cur.Name, errNotPlatform)
	}
	next := cur.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Data = map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username)}
	w.record(next, cur, acct, stored, rec)
	w.Keys.stampMetadata(next, acct, hr)
	if err := w.Client.Update(ctx, next, client.FieldOwner(FieldOwner)); err != nil {
		return nil, fmt.Errorf("reclaiming Secret %s: %w", cur.Name, err)
	}
	return next, nil
}

// Replace deletes, for the platform account acct, a Secret cur at its name
// that no update can repair (Frozen, or being deleted), its finalizers removed first so
// that the deletion completes, with a UID precondition, and creates it
// again from the kept password (Create).
func (w *Writer) Replace(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret, f verifier.Format, by string) (*corev1.Secret, error) {
	if acct.GetOwner() != credv1.OwnerPlatform {
		return nil, fmt.Errorf("Secret %s: %w", cur.Name, errNotPlatform)
	}
	if len(cur.Finalizers) > 0 {
		before := cur.DeepCopy()
		cur.Finalizers = nil
		if err := w.Client.Patch(ctx, cur, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("removing the finalizers of Secret %s to replace it: %w", cur.Name, err)
		}
	}
	if err := w.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("deleting Secret %s to replace it: %w", cur.Name, err)
	}
	return w.Create(ctx, acct, hr, f, by)
}
