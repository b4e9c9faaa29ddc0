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
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
)

// deliverValues makes the HelmRelease's valuesFrom carry the account's
// entry where nothing else can shadow it: before every entry credo did not
// write, alone at its targetPath (placeValues), leaving every other entry
// and field alone; a release delivering a platform account is labelled
// PlatformValuesLabel, which the credo-platform-releases admission policy
// guards. An entry that was shadowed is a Warning (ValuesShadowed) on the
// account and the release. A release with post-renderers is
// DeliveryFailed ValuesShadowed: they may rewrite what the chart renders.
// A suspended release is reported, and a password minted or revoked since
// before (the last operation the status recorded) is a Warning. A release
// whose valuesFrom another writer owns (valuesOwnerOf: Git, or the
// platform) is not edited, and the condition says which entry the owner
// must list, and where. What another writer keeps undoing is put back a
// bounded number of times (rewriteGuard), then ValuesFromContested.
func (r *CredentialAccountReconciler) deliverValues(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, before *credv1.Operation) error {
	want := valuesRef(acct)
	accounts, err := r.accountEntries(ctx, hr)
	if err != nil {
		return err
	}
	accounts[want.Name] = want
	p := placementOf(hr, want, accounts)
	platform := acct.GetOwner() == credv1.OwnerPlatform
	label := platform && hr.Labels[credv1.PlatformValuesLabel] != "true"
	if p.good() {
		r.rewrites.held(hr.UID, r.now(), want.Name)
	}
	if platform && !label {
		r.rewrites.held(hr.UID, r.now(), platformLabelItem)
	}
	if !p.good() || label {
		if err := r.placeEntry(ctx, acct, hr, want, accounts, p, label); err != nil {
			return err
		}
	}
	if n := len(hr.Spec.PostRenderers); n > 0 {
		if conditions.GetReason(acct, credv1.DeliveryFailedCondition) != credv1.ValuesShadowedReason {
			metrics.ValuesShadowed(acct.Namespace)
		}
		return reconciler.NewStalling(credv1.ValuesShadowedReason,
			"HelmRelease %s has %d post-renderer(s), which may rewrite what the chart renders: the engine may not get the verifier delivered at %s", hr.Name, n, want.TargetPath)
	}
	if hr.Spec.Suspend {
		r.warnSuspended(acct, hr, before)
		return reconciler.NewWaiting(credv1.ReleaseSuspendedReason,
			"HelmRelease %s is suspended; the password reaches the engine when it is resumed", hr.Name)
	}
	return nil
}

// placeEntry writes the account's entry where placeValues puts it (and the
// platform label when label), with an optimistic lock, recording a
// Warning when something else set the account's path. A release whose
// valuesFrom another writer owns is left to it, but for the label
// (valuesOwner.report says what the owner must change). What credo puts
// back after another writer undid it is counted, and refused once
// contested (rewriteGuard).
func (r *CredentialAccountReconciler) placeEntry(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, want helmv2.ValuesReference, accounts map[string]helmv2.ValuesReference, p placement, label bool) error {
	owner, owned := r.valuesOwnerOf(hr)
	var items []string
	if !owned && !p.good() {
		items = append(items, want.Name)
	}
	if label {
		items = append(items, platformLabelItem)
	}
	if len(items) > 0 {
		if err := r.writeRelease(ctx, acct, hr, want, items, func(hr *helmv2.HelmRelease) {
			if !owned && !p.good() {
				hr.Spec.ValuesFrom = placeValues(hr.Spec.ValuesFrom, want, accounts)
			}
			if label {
				setPlatformLabel(hr)
			}
		}); err != nil {
			return err
		}
	}
	if owned {
		return owner.report(acct, hr, want, p)
	}
	if p.good() {
		return nil
	}
	switch {
	case p.shadowed():
		metrics.ValuesShadowed(acct.Namespace)
		r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.ValuesShadowedReason,
			"the valuesFrom entry for Secret %s at %s was shadowed by %s; credo put it first and removed the other entries at its path",
			want.Name, want.TargetPath, strings.Join(p.overlapping, ", "))
	case !p.carried:
		r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.ValuesFromUpdatedReason, eventActionAccount,
			"added valuesFrom Secret %s to HelmRelease %s at %s, first", want.Name, hr.Name, want.TargetPath)
	case len(p.behind) > 0:
		r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.ValuesFromUpdatedReason, eventActionAccount,
			"moved valuesFrom Secret %s first in HelmRelease %s, before %s", want.Name, hr.Name, strings.Join(p.behind, ", "))
	}
	return nil
}

// writeRelease patches hr with mutate, which writes items (the account's
// entry, want, and or the platform label), unless one of them is
// contested: then nothing is written, and the account is Stalled
// ValuesFromContested, with one Warning when the contest begins. The
// guard, not the cached status, says when that is: the write that
// preceded it queues reconciles that may read the account before its
// status shows the contest, and must not record it again.
func (r *CredentialAccountReconciler) writeRelease(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, want helmv2.ValuesReference, items []string, mutate func(*helmv2.HelmRelease)) error {
	if item, fresh := r.rewrites.contested(hr.UID, r.now(), items...); item != "" {
		err := contestedError(hr, want, item)
		if fresh {
			r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.ValuesFromContestedReason, "%s", err.Error())
		}
		err.Config = reconciler.Config{Event: reconciler.EventTypeNone, Log: true}
		return err
	}
	if _, err := r.patchRelease(ctx, hr, mutate); err != nil {
		return fmt.Errorf("updating HelmRelease %s: %w", hr.Name, err)
	}
	for range r.rewrites.wrote(hr.UID, r.now(), items...) {
		metrics.ValuesFromRewritten(acct.Namespace)
	}
	return nil
}

// contestedError says what credo stopped putting back on hr, and how to
// make one writer own it.
func contestedError(hr *helmv2.HelmRelease, want helmv2.ValuesReference, item string) *reconciler.Stalling {
	if item == platformLabelItem {
		return reconciler.NewStalling(credv1.ValuesFromContestedReason,
			"credo put the label %s back on HelmRelease %s %d times within %s after another writer removed it, and stopped rather than fight over it; "+
				"have the writer that owns the release's labels keep %s: \"true\" (the credo-platform-releases admission policy guards the release only while it is there)",
			credv1.PlatformValuesLabel, hr.Name, maxRewrites, rewriteWindow, credv1.PlatformValuesLabel)
	}
	return reconciler.NewStalling(credv1.ValuesFromContestedReason,
		"credo put the valuesFrom entry for Secret %s back on HelmRelease %s %d times within %s after another writer removed or moved it, and stopped rather than fight over spec.valuesFrom; "+
			"if that writer owns the list (the platform's apps API), match the release with the credential-controller's --values-from-owner-selector and have the writer list "+
			"{kind: Secret, name: %s, valuesKey: %s, targetPath: %s}; otherwise stop what undoes it. credo writes it again once it is found in place (first, alone at its path) without credo writing it, or after a restart",
		want.Name, hr.Name, maxRewrites, rewriteWindow, want.Name, want.ValuesKey, want.TargetPath)
}

// setPlatformLabel marks hr as delivering a platform account.
func setPlatformLabel(hr *helmv2.HelmRelease) {
	if hr.Labels == nil {
		hr.Labels = map[string]string{}
	}
	hr.Labels[credv1.PlatformValuesLabel] = "true"
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
// the valuesFrom of the HelmRelease key, unless another writer owns the
// list (Git, the platform: valuesOwnerOf) or the release is gone or going.
func (r *CredentialAccountReconciler) dropValuesEntry(ctx context.Context, key client.ObjectKey, secret string) error {
	var hr helmv2.HelmRelease
	if err := r.Get(ctx, key, &hr); err != nil {
		return client.IgnoreNotFound(err)
	}
	want := helmv2.ValuesReference{Kind: "Secret", Name: secret, ValuesKey: credv1.PasswordKey}
	if !hr.DeletionTimestamp.IsZero() || len(withoutAccount(hr.Spec.ValuesFrom, want)) == len(hr.Spec.ValuesFrom) {
		return nil
	}

	if _, owned := r.valuesOwnerOf(&hr); owned {
		// The owner lists the entry; an edit would be reverted.
		return nil
	}
	if err := r.editValuesFrom(ctx, &hr, func(in []helmv2.ValuesReference) []helmv2.ValuesReference {
		return withoutAccount(in, want)
	}); err != nil {
		return err
	}
	// credo removed it itself: adding it again later puts back nothing
	// someone else undid.
	r.rewrites.forget(hr.UID, secret)
	return nil
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

// patchRelease applies mutate to hr and requests a reconcile with a credo
// token, in one patch with an optimistic lock (an edit someone else makes
// concurrently is never lost), under credo's field owner. It returns the
// token.
func (r *CredentialAccountReconciler) patchRelease(ctx context.Context, hr *helmv2.HelmRelease, mutate func(*helmv2.HelmRelease)) (string, error) {
	before := hr.DeepCopy()
	mutate(hr)
	if hr.Annotations == nil {
		hr.Annotations = map[string]string{}
	}
	token := reconcileToken(r.now())
	hr.Annotations[meta.ReconcileRequestAnnotation] = token
	if err := r.Patch(ctx, hr, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(CredentialFieldOwner)); err != nil {
		return "", err
	}
	return token, nil
}

// tokenPrefix starts every reconcile.fluxcd.io/requestedAt value credo
// writes; the rest is the time of the request, RFC 3339 with nanoseconds.
// A later token handled by helm-controller covers an earlier one only when
// credo issued it: the tenant may write the annotation of its release (any
// value, "credo:" and a time far ahead included), never an account's
// status, where credo records each token it issues (issuedTokens).
const tokenPrefix = "credo:"

// reconcileToken is the requestedAt value of a request made at t.
func reconcileToken(t time.Time) string {
	return tokenPrefix + t.UTC().Format(time.RFC3339Nano)
}
