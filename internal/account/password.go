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

	corev1 "k8s.io/api/core/v1"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// Record is the operation a password write records on the account Secret
// beside the value it stores.
type Record struct {
	// Origin is the operation: Minted, Revoked, Generated or NotIssued.
	Origin credv1.Origin
	// By is who performed it: the requester kube-apiserver authenticated,
	// or the controller.
	By string
	// Rotate is, for a platform account, the spec.rotate value the stored
	// password answers ("" records none). A tenant account's is left alone.
	Rotate string
	// MigratedRotation records that the migration rotated the password of a
	// platform account the tenant could read (see migrated.go).
	MigratedRotation bool
}

// FormatError is a verifier the account's format could not compute. It
// holds the format's reason, never the password.
type FormatError struct {
	// Format is the format's name.
	Format string
	// Err is the format's reason.
	Err error
}

func (e *FormatError) Error() string { return fmt.Sprintf("format %s: %s", e.Format, e.Err.Error()) }

func (e *FormatError) Unwrap() error { return e.Err }

// storedValue is what the account Secret stores for password in format f:
// its verifier, or the plaintext for the plaintext format.
func storedValue(f verifier.Format, username, password string) (string, error) {
	stored, err := f.Verifier(username, password)
	if err != nil {
		return "", &FormatError{Format: f.Name(), Err: err}
	}
	return stored, nil
}

// NewPassword is the one password-write sequence, for a mint, a revocation
// and a platform rotation alike. After the guard passed on cur, it
// generates a password and computes its verifier in acct's format f; for a
// platform account it keeps the password in the platform namespace first
// (a lost account write then leaves a kept password the controller writes
// the verifier of, never an account nobody can recover); then it stores the
// verifier in cur (Store). It returns the password and the Secret written;
// a caller that revokes discards the password.
func (w *Writer) NewPassword(ctx context.Context, acct *credv1.CredentialAccount, cur *corev1.Secret, f verifier.Format, rec Record) (string, *corev1.Secret, error) {
	if err := w.Keys.Guard(cur, acct, false); err != nil {
		return "", nil, fmt.Errorf("Secret %s: %w", cur.Name, err)
	}
	password, err := GeneratePassword()
	if err != nil {
		return "", nil, err
	}
	stored, err := storedValue(f, acct.Spec.Username, password)
	if err != nil {
		return "", nil, err
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		if err := w.Keep(ctx, acct, password, rec.Rotate); err != nil {
			return "", nil, err
		}
	}
	written, err := w.Store(ctx, acct, cur, stored, rec)
	if err != nil {
		return "", nil, err
	}
	return password, written, nil
}

// Store writes stored (a verifier, or the plaintext of the plaintext
// format) into acct's account Secret cur, recording the operation (origin,
// history) and, for a platform account, the rotation it answers. The guard
// runs on cur, and the apply is conditional on cur's resourceVersion: a
// Secret changed since it was read fails with Conflict.
func (w *Writer) Store(ctx context.Context, acct *credv1.CredentialAccount, cur *corev1.Secret, stored string, rec Record) (*corev1.Secret, error) {
	if err := w.Keys.Guard(cur, acct, false); err != nil {
		return nil, fmt.Errorf("Secret %s: %w", cur.Name, err)
	}
	next, err := ownPart(cur)
	if err != nil {
		return nil, err
	}
	w.record(next, cur, acct, stored, rec)
	written, err := w.apply(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("storing the password of %s: %w", cur.Name, err)
	}
	return written, nil
}

// record sets on next, the Secret to write over cur, the stored value, the
// account's UID and the operation, appended to cur's history.
func (w *Writer) record(next, cur *corev1.Secret, acct *credv1.CredentialAccount, stored string, rec Record) {
	if next.Data == nil {
		next.Data = map[string][]byte{}
	}
	next.Data[credv1.PasswordKey] = []byte(stored)
	w.Keys.Stamp(next, acct.UID)
	a := next.GetAnnotations()
	a[w.Keys.Origin] = string(rec.Origin)
	a[w.Keys.History] = ParseHistory(cur.Annotations[w.Keys.History]).Append(rec.Origin, rec.By, w.now()).String()
	w.Keys.markMigration(a, rec, w.now())
	if acct.GetOwner() == credv1.OwnerPlatform {
		setRotate(a, cur.Annotations, w.Keys.Rotate, rec.Rotate)
	}
}

// setRotate records in annotations, those of the Secret to write over one
// whose annotations are were, the spec.rotate value a password answers.
// None clears it: absent stays absent, a recorded value is emptied (which
// reads as none) rather than removed, since an apply cannot remove a field
// the create wrote.
func setRotate(annotations, were map[string]string, key, rotate string) {
	if _, ok := were[key]; rotate == "" && !ok {
		delete(annotations, key)
		return
	}
	annotations[key] = rotate
}

// errNoPlatformNamespace refuses a platform password write by a writer that
// has no platform namespace (the access API's, which writes tenant accounts
// only).
var errNoPlatformNamespace = errors.New("this writer keeps no platform passwords")
