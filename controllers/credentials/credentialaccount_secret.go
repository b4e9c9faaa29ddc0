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
	"errors"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/verifier"
)

// ensureSecret creates the account Secret (NotIssued, or Generated for a
// platform account), or brings the metadata of an existing one of this
// account up to date without touching its password; a platform account's
// stored verifier is checked against the kept password. A foreign Secret,
// or one that belongs to another account, is never written. With no
// release (hr nil), the Secret is the account's until the release exists;
// once it does, the Secret written meanwhile is handed over to it.
func (r *CredentialAccountReconciler) ensureSecret(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, f verifier.Format) (_ *corev1.Secret, err error) {
	if err := r.checkPlaintext(ctx, acct, f); err != nil {
		return nil, err
	}
	w := r.writer()
	if acct.GetOwner() == credv1.OwnerPlatform {
		b, err := r.binding(ctx, acct, hr)
		if err != nil {
			return nil, err
		}
		w.Binding = b
	}
	cur, err := w.Read(ctx, acct)
	if err != nil {
		return nil, err
	}
	if cur != nil && account.ManagedByCredo(cur) && r.AccountKeys.OfEarlierRelease(cur, acct, hr) {
		return nil, r.dropEarlier(ctx, w, acct, hr, cur)
	}
	if cur != nil && hr != nil && r.AccountKeys.Awaits(cur, acct.UID, acct.Spec.Release) {
		defer func() {
			if err == nil {
				r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.SecretHandedOverReason, eventActionAccount,
					"handed Secret %s, written before HelmRelease %s existed, over to it; its password is kept", cur.Name, hr.Name)
			}
		}()
	}
	if cur == nil {
		s, err := w.Create(ctx, acct, hr, f, controllerIdentity)
		return r.created(acct, s, err)
	}
	guard := r.AccountKeys.Guard(cur, acct, true)
	platform := acct.GetOwner() == credv1.OwnerPlatform
	if (guard != nil || account.Frozen(cur)) && platform {
		// The platform account keeps the Secret of its name (it passed the
		// collision check): whatever was written there in the tenant's
		// namespace is replaced by the verifier of the kept password.
		return r.reclaimPlatform(ctx, w, acct, hr, cur, f)
	}
	switch {
	case errors.Is(guard, account.ErrForeign):
		return nil, reconciler.NewStalling(credv1.NameCollisionReason,
			"Secret %s exists and was not created by credo; it is left untouched", cur.Name)
	case errors.Is(guard, account.ErrClaimed):
		return nil, reconciler.NewStalling(credv1.AccountCollisionReason,
			"Secret %s belongs to another CredentialAccount; it is left untouched", cur.Name)
	}
	if platform {
		if !r.AccountKeys.Claimed(cur) {
			// Written before UIDs were recorded: adopted first, so that
			// the check below writes a Secret carrying the account's UID.
			if cur, err = w.SetMetadata(ctx, acct, hr, cur); err != nil {
				return nil, err
			}
		}
		if cur, err = r.checkPlatform(ctx, w, acct, hr, cur, f); err != nil {
			return nil, err
		}
	}
	return w.SetMetadata(ctx, acct, hr, cur)
}

// dropEarlier deletes the account Secret cur that credo made for an
// earlier HelmRelease of the account's release name (the application was
// deleted, and maybe made again as hr, or the Secret was orphaned): no
// password, verifier or record of the earlier application carries over.
// It is made again once it is gone, for hr or, with none (hr nil),
// awaiting the release.
func (r *CredentialAccountReconciler) dropEarlier(ctx context.Context, w *account.Writer, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, cur *corev1.Secret) error {
	if _, err := w.DeleteRecord(ctx, cur); err != nil {
		return err
	}
	again := "for this one"
	if hr == nil {
		again = "awaiting the next one"
	}
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.EarlierReleaseSecretReason, eventActionAccount,
		"deleted Secret %s, made for an earlier HelmRelease %s; it is made again %s", cur.Name, acct.Spec.Release, again)
	return reconciler.NewWaiting(credv1.SecretDeletingReason, "Secret %s was made for an earlier HelmRelease %s; it is made again once it is gone", cur.Name, acct.Spec.Release)
}
