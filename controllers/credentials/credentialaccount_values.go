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
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/reconciler"
)

// gitOpsOwnerLabels mark a HelmRelease applied from Git by Flux; an edit of
// its spec would be reverted at the next apply.
var gitOpsOwnerLabels = []string{"kustomize.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/name"}

// valuesRef is the valuesFrom entry an account needs.
func valuesRef(acct *credv1.CredentialAccount) helmv2.ValuesReference {
	return helmv2.ValuesReference{
		Kind:       "Secret",
		Name:       acct.SecretName(),
		ValuesKey:  credv1.PasswordKey,
		TargetPath: acct.Spec.ValuesFrom.TargetPath,
	}
}

// deliverValues makes the HelmRelease's valuesFrom carry exactly one entry
// for the account, leaving every other entry and field alone. A suspended
// release is reported, and a password minted or revoked since before (the
// last operation the status recorded) is a Warning; a release applied from
// Git is not edited, and the condition says which entry Git must carry.
func (r *CredentialAccountReconciler) deliverValues(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, before *credv1.Operation) error {
	want := valuesRef(acct)
	has := false
	for _, v := range hr.Spec.ValuesFrom {
		v.Optional = false
		if v == want {
			has = true
		}
	}
	if !has {
		for _, l := range gitOpsOwnerLabels {
			if _, ok := hr.Labels[l]; ok {
				return reconciler.NewStalling(credv1.ManagedByGitOpsReason,
					"HelmRelease %s is applied from Git (%s); add to its spec.valuesFrom: {kind: Secret, name: %s, valuesKey: %s, targetPath: %s}",
					hr.Name, l, want.Name, want.ValuesKey, want.TargetPath)
			}
		}
		if err := r.editValuesFrom(ctx, hr, func(in []helmv2.ValuesReference) []helmv2.ValuesReference {
			return append(withoutAccount(in, want), want)
		}); err != nil {
			return err
		}
		r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.ValuesFromUpdatedReason, eventActionAccount,
			"added valuesFrom Secret %s to HelmRelease %s at %s", want.Name, hr.Name, want.TargetPath)
	}
	if hr.Spec.Suspend {
		r.warnSuspended(acct, hr, before)
		return reconciler.NewWaiting(credv1.ReleaseSuspendedReason,
			"HelmRelease %s is suspended; the password reaches the engine when it is resumed", hr.Name)
	}
	return nil
}

// warnSuspended records a Warning on the account and its suspended release
// when the last operation on the account Secret is a mint or a revocation
// the status had not recorded (before): the engine goes on with the
// previous password until the release is resumed. Once per operation: the
// status records it.
func (r *CredentialAccountReconciler) warnSuspended(acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, before *credv1.Operation) {
	op := lastOperation(acct)
	if op == nil || sameOperation(op, before) {
		return
	}
	var what, effect string
	switch op.Operation {
	case credv1.OriginMinted:
		what, effect = "minted", "keeps the previous password"
	case credv1.OriginRevoked:
		what, effect = "revoked", "still accepts the revoked password"
	default:
		return
	}
	r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.ReleaseSuspendedReason,
		"the password of %s was %s by %s at %s (Secret %s), but HelmRelease %s is suspended: the engine %s until the release is resumed",
		acct.Spec.Username, what, op.By, op.At.UTC().Format(time.RFC3339), acct.SecretName(), hr.Name, effect)
}

// lastOperation is the last operation the status of acct records, or nil.
func lastOperation(acct *credv1.CredentialAccount) *credv1.Operation {
	h := acct.Status.History
	if len(h) == 0 {
		return nil
	}
	return h[len(h)-1].DeepCopy()
}

func sameOperation(a, b *credv1.Operation) bool {
	return b != nil && a.Operation == b.Operation && a.By == b.By && a.At.Equal(&b.At)
}

// removeValues drops the account's entry (any entry naming its Secret and
// key) from the HelmRelease, for an account that no longer asks for it.
func (r *CredentialAccountReconciler) removeValues(ctx context.Context, acct *credv1.CredentialAccount) error {
	return r.dropValuesEntry(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}, acct.SecretName())
}

// dropValuesEntry drops the entries naming the account Secret secret from
// the valuesFrom of the HelmRelease key, unless Git owns them or the
// release is gone or going.
func (r *CredentialAccountReconciler) dropValuesEntry(ctx context.Context, key client.ObjectKey, secret string) error {
	var hr helmv2.HelmRelease
	if err := r.Get(ctx, key, &hr); err != nil {
		return client.IgnoreNotFound(err)
	}
	want := helmv2.ValuesReference{Kind: "Secret", Name: secret, ValuesKey: credv1.PasswordKey}
	if !hr.DeletionTimestamp.IsZero() || len(withoutAccount(hr.Spec.ValuesFrom, want)) == len(hr.Spec.ValuesFrom) {
		return nil
	}

	for _, l := range gitOpsOwnerLabels {
		if _, ok := hr.Labels[l]; ok {
			// Git owns the entry; an edit would be reverted.
			return nil
		}
	}
	return r.editValuesFrom(ctx, &hr, func(in []helmv2.ValuesReference) []helmv2.ValuesReference {
		return withoutAccount(in, want)
	})
}

// withoutAccount drops entries for the account's Secret and key.
func withoutAccount(in []helmv2.ValuesReference, want helmv2.ValuesReference) []helmv2.ValuesReference {
	out := make([]helmv2.ValuesReference, 0, len(in))
	for _, v := range in {
		if v.Kind == want.Kind && v.Name == want.Name && v.ValuesKey == want.ValuesKey {
			continue
		}
		out = append(out, v)
	}
	return out
}

// editValuesFrom patches spec.valuesFrom with an optimistic lock, so an
// entry someone else adds concurrently is never lost, and asks
// helm-controller to reconcile the release.
func (r *CredentialAccountReconciler) editValuesFrom(ctx context.Context, hr *helmv2.HelmRelease, edit func([]helmv2.ValuesReference) []helmv2.ValuesReference) error {
	if _, err := r.patchRelease(ctx, hr, func(hr *helmv2.HelmRelease) { hr.Spec.ValuesFrom = edit(hr.Spec.ValuesFrom) }); err != nil {
		return fmt.Errorf("updating valuesFrom of HelmRelease %s: %w", hr.Name, err)
	}
	return nil
}
