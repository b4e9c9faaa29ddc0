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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
)

// The refusals of the ownership guard and of a create. Callers tell them
// apart with errors.Is; none of them, nor any error of the Writer, carries a
// password, a verifier or any other Secret data.
var (
	// ErrForeign: the Secret has no entry of credo's field manager; it is
	// never written (a platform account reclaims it, see Reclaim).
	ErrForeign = errors.New("the Secret was not created by credo")
	// ErrClaimed: credo wrote the Secret, but it does not carry the
	// account's UID (another account holds it, or its UID is not recorded
	// yet).
	ErrClaimed = errors.New("the Secret does not carry the account's identity")
	// ErrExists: a create found a Secret of the name; nothing was written.
	ErrExists = errors.New("the Secret exists")
	// ErrKeptClaimed: the kept password of the name belongs to another
	// account.
	ErrKeptClaimed = errors.New("the kept password belongs to another CredentialAccount")
)

// Writer is the one writer of account Secrets (in the account's namespace)
// and of the kept plaintexts of platform accounts (in the platform
// namespace), for the credential-controller and the access API alike.
//
// Every write goes through the same door:
//
//   - a Secret that does not exist is created, never applied, so that a
//     Secret someone else created in between fails the create (ErrExists)
//     instead of being merged into;
//   - a Secret that exists is written only after the ownership guard (Guard)
//     passed on the version read, and with that resourceVersion as a
//     precondition, so a Secret replaced or changed since fails the write
//     (Conflict) instead of being written over;
//   - every write is made under credo's field manager (FieldOwner) and
//     stamps the account's UID.
//
// A write to an existing Secret is a server-side apply built with
// github.com/fluxcd/pkg/ssa's pieces (normalize, the object formatting of
// its errors) and sent as ssa's ResourceManager sends its own: a force apply
// under one field manager. It starts from the fields credo's applies
// already own (ownPart), so that no write drops what another wrote. It is
// not ResourceManager.Apply, which reads the object again and dry-runs
// every apply before applying: two more API requests per write than the
// one read the guard needs and the one write, for a drift check the writer
// makes on the object it already read. Nor can ResourceManager.Apply
// create-not-apply or keep a precondition across its dry run and its write.
//
// Two writes stay updates, under the same precondition, because an apply
// cannot remove a field another manager set: a platform account's reclaim of
// a foreign Secret (its keys are replaced), and a metadata write over an
// owner reference that is not the release's. ssa's way to take such fields
// over (ApplyCleanupOptions.FieldManagers) is one more request and carries
// no precondition.
type Writer struct {
	// Client writes.
	Client client.Client
	// Reader reads the Secrets uncached: the guard needs their managed
	// fields and current resourceVersion. Nil: Client.
	Reader client.Reader
	// Keys are the annotation and label keys of account Secrets.
	Keys Keys
	// PlatformNamespace holds the kept plaintexts of platform accounts.
	// Empty: the writer writes no platform account's password.
	PlatformNamespace string
	// Now returns the time of the operations recorded; time.Now when nil.
	Now func() time.Time
	// Binding, when set, is the tenant namespace and release the kept
	// passwords written are bound to (binding.go); a kept password bound to
	// another is of an earlier application, and is deleted, never read.
	Binding *Binding
}

// Read returns the account Secret of acct, read uncached; nil, without
// error, when there is none.
func (w *Writer) Read(ctx context.Context, acct *credv1.CredentialAccount) (*corev1.Secret, error) {
	return w.read(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: acct.SecretName()})
}

func (w *Writer) read(ctx context.Context, key client.ObjectKey) (*corev1.Secret, error) {
	reader := w.Reader
	if reader == nil {
		reader = w.Client
	}
	var s corev1.Secret
	if err := reader.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	return &s, nil
}

// Guard is the ownership check of an account Secret, run by every write on
// the version it writes over: nil when credo's field manager wrote s and s
// carries acct's UID, ErrForeign or ErrClaimed otherwise. With legacy set, a
// Secret credo wrote before UIDs were recorded (no UID, and the account
// label of acct's name) passes too: the controller's metadata write, which
// records the UID, adopts it.
func (k Keys) Guard(s metav1.Object, acct *credv1.CredentialAccount, legacy bool) error {
	if !ManagedByCredo(s) {
		return ErrForeign
	}
	if k.BelongsTo(s, acct.UID) || (legacy && !k.Claimed(s) && s.GetLabels()[k.Account] == LabelValue(acct.Name)) {
		return nil
	}
	return ErrClaimed
}

// ManagedByCredo reports whether credo's field manager has written obj.
func ManagedByCredo(obj metav1.Object) bool { return fieldowner.Wrote(obj, FieldOwner) }

// ownPart returns the fields of s that credo's applies own, as the Secret
// to apply next, with s's resourceVersion as the precondition. A write
// starts from it so that nothing credo applied before is dropped: one
// field manager applying a part of its fields removes the rest.
func ownPart(s *corev1.Secret) (*corev1.Secret, error) {
	ac, err := corev1ac.ExtractSecret(s, FieldOwner)
	if err != nil {
		return nil, fmt.Errorf("reading credo's fields of Secret %s: %w", s.Name, err)
	}
	raw, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("reading credo's fields of Secret %s: %w", s.Name, err)
	}
	out := &corev1.Secret{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("reading credo's fields of Secret %s: %w", s.Name, err)
	}
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	out.Name, out.Namespace, out.ResourceVersion = s.Name, s.Namespace, s.ResourceVersion
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	return out, nil
}

// apply sends desired, a Secret carrying the resourceVersion it was built
// from, over that version under credo's field manager (fieldowner's door),
// and returns the Secret the API server stored. A change since that
// version fails with Conflict (apierrors.IsConflict holds on the error).
func (w *Writer) apply(ctx context.Context, desired *corev1.Secret) (*corev1.Secret, error) {
	return fieldowner.ApplyOver(ctx, w.Client, desired, desired.ResourceVersion, FieldOwner)
}

// create creates s under credo's field manager (fieldowner's door); a
// Secret of its name, even one created a moment ago, fails it with
// ErrExists.
func (w *Writer) create(ctx context.Context, s *corev1.Secret) error {
	if err := fieldowner.Create(ctx, w.Client, s, FieldOwner); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Secret %s: %w", s.Name, ErrExists)
		}
		return fmt.Errorf("creating Secret %s: %w", s.Name, err)
	}
	return nil
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}
