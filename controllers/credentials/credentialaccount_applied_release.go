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
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
)

// tokenTime is the time of a credo token; false for any other value.
func tokenTime(v string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(v, tokenPrefix)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, rest)
	return t, err == nil
}

// covers reports whether the requestedAt value v is ours, or a token credo
// issued (one of issued) made at or after ours.
func covers(v, ours string, issued map[string]bool) bool {
	if v == ours {
		return true
	}
	if !issued[v] {
		return false
	}
	t, ok := tokenTime(v)
	o, ok2 := tokenTime(ours)
	return ok && ok2 && !t.Before(o)
}

// issuedTokens are the reconcile tokens the accounts of hr recorded in
// their status: the tokens credo issued that are still current.
func (r *CredentialAccountReconciler) issuedTokens(ctx context.Context, hr *helmv2.HelmRelease) (map[string]bool, error) {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list, client.InNamespace(hr.Namespace), client.MatchingFields{accountReleaseIndex: hr.Name}); err != nil {
		return nil, fmt.Errorf("listing the accounts of HelmRelease %s: %w", hr.Name, err)
	}
	out := map[string]bool{}
	for i := range list.Items {
		if req := list.Items[i].Status.AppliedRequest; req != nil {
			out[req.Token] = true
		}
	}
	return out, nil
}

// releaseApplied is what the HelmRelease hr says of the account Secret s
// it reads through valuesFrom. helm-controller reads valuesFrom Secrets
// uncached (unless its CacheSecretsAndConfigMaps feature gate is on), so a
// reconcile it starts after s reached a version reads that version or a
// later one. credo requests such a reconcile, with a token, whenever s's
// resourceVersion differs from the one last requested for (or the request
// was overwritten before helm-controller handled it), and the account's
// engine uses s's verifier once helm-controller handled that token (or a
// later credo token) and the release is Ready, at its generation, with its
// latest attempted values deployed.
func (r *CredentialAccountReconciler) releaseApplied(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, s *corev1.Secret) (consumerState, error) {
	if !carries(hr, acct) {
		// A release applied from Git that was never given the entry.
		return appliedFalse(credv1.ValuesNotDeliveredReason, "HelmRelease %s has no valuesFrom entry for Secret %s", hr.Name, s.Name), nil
	}
	if n := len(hr.Spec.PostRenderers); n > 0 {
		return appliedFalse(credv1.ValuesShadowedReason, "HelmRelease %s has %d post-renderer(s), which may rewrite what the chart renders from Secret %s", hr.Name, n, s.Name), nil
	}
	issued, err := r.issuedTokens(ctx, hr)
	if err != nil {
		return appliedUnknown(credv1.ObserveFailedReason, "HelmRelease %s: the reconcile requests credo made could not be listed", hr.Name), err
	}
	req := acct.Status.AppliedRequest
	stale := req == nil || req.SecretResourceVersion != s.ResourceVersion || requestLost(hr, req.Token, issued)
	if stale && hr.Spec.Suspend {
		// Requested once it is resumed: a change of its generation.
		return releasePending(hr, "credo requests a reconcile once it is resumed"), nil
	}
	if stale {
		token, err := r.requestReconcile(ctx, hr)
		if err != nil {
			return releasePending(hr, "credo could not request a reconcile"),
				fmt.Errorf("requesting a reconcile of HelmRelease %s: %w", hr.Name, err)
		}
		acct.Status.AppliedRequest = &credv1.AppliedRequest{Token: token, SecretResourceVersion: s.ResourceVersion}
		return releasePending(hr, "reconcile requested"), nil
	}
	if !covers(hr.Status.LastHandledReconcileAt, req.Token, issued) {
		return releasePending(hr, "helm-controller has not handled the reconcile credo requested"), nil
	}
	ready := conditions.Get(hr, meta.ReadyCondition)
	switch {
	case ready != nil && ready.Status == metav1.ConditionFalse:
		// helm-controller's reason only: its message may quote values.
		return appliedFalse(credv1.ReleaseFailedReason, "HelmRelease %s is not Ready after the requested reconcile (%s)", hr.Name, ready.Reason), nil
	case ready == nil || ready.Status != metav1.ConditionTrue || hr.Status.ObservedGeneration != hr.Generation:
		return releasePending(hr, "the release is not Ready at its generation yet"), nil
	}
	latest := hr.Status.History.Latest()
	if latest == nil || latest.Status != "deployed" || latest.ConfigDigest != hr.Status.LastAttemptedConfigDigest {
		return releasePending(hr, "the release's latest values are not deployed yet"), nil
	}
	return r.deployedCarries(ctx, acct, hr, latest, s)
}

// deployedCarries is Applied True when the values Helm recorded for the
// deployed version latest carry the account Secret's verifier at its
// targetPath, and ValuesShadowed (with a Warning on the transition) when
// they carry anything else: the HelmRelease's spec and status are the
// tenant's to write where it holds Flux's flux-edit, Helm's record of what
// was rendered is helm-controller's.
func (r *CredentialAccountReconciler) deployedCarries(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, latest *helmv2.Snapshot, s *corev1.Secret) (consumerState, error) {
	path := acct.Spec.ValuesFrom.TargetPath
	got, err := r.deployedValue(ctx, hr, latest, path)
	if err != nil && !errors.Is(err, errNoValueAtPath) {
		if apierrors.IsNotFound(err) {
			return releasePending(hr, fmt.Sprintf("Helm's record of release v%d is not there yet", latest.Version)), nil
		}
		return appliedUnknown(credv1.ObserveFailedReason, "HelmRelease %s: the values of release v%d could not be read", hr.Name, latest.Version), err
	}
	if err != nil || got != string(s.Data[credv1.PasswordKey]) {
		if conditions.GetReason(acct, credv1.AppliedCondition) != credv1.ValuesShadowedReason {
			metrics.ValuesShadowed(acct.Namespace)
			r.events(hr).Warn(acct, account.EventMetadata(acct), credv1.ValuesShadowedReason,
				"HelmRelease %s deployed release v%d without the verifier of Secret %s at %s: something else set that path",
				hr.Name, latest.Version, s.Name, path)
		}
		return appliedFalse(credv1.ValuesShadowedReason, "HelmRelease %s deployed release v%d without the verifier of Secret %s at %s", hr.Name, latest.Version, s.Name, path), nil
	}
	return appliedTrue(credv1.ReleaseReconciledReason, "HelmRelease %s reconciled with it (release v%d deployed)", hr.Name, latest.Version), nil
}

// requestReconcile sets a credo token on hr; on a conflict (the cache lags
// behind the release) once more on a fresh read.
func (r *CredentialAccountReconciler) requestReconcile(ctx context.Context, hr *helmv2.HelmRelease) (string, error) {
	noop := func(*helmv2.HelmRelease) {}
	token, err := r.patchRelease(ctx, hr, noop)
	if !apierrors.IsConflict(err) {
		return token, err
	}
	fresh := &helmv2.HelmRelease{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(hr), fresh); err != nil {
		return "", err
	}
	return r.patchRelease(ctx, fresh, noop)
}

// releasePending says the release has not yet shown it uses the Secret:
// Unknown, or False while it is suspended (helm-controller does nothing
// until it is resumed).
func releasePending(hr *helmv2.HelmRelease, why string) consumerState {
	if hr.Spec.Suspend {
		return appliedFalse(credv1.ReleaseReconcilePendingReason, "HelmRelease %s is suspended; %s", hr.Name, why)
	}
	return appliedUnknown(credv1.ReleaseReconcilePendingReason, "HelmRelease %s: %s", hr.Name, why)
}

// requestLost reports whether credo's request token was overwritten (the
// annotation is another value that is no later credo token) and was not
// handled before (helm-controller's last handled value is neither it nor a
// later credo token): credo must request again.
func requestLost(hr *helmv2.HelmRelease, token string, issued map[string]bool) bool {
	return !covers(hr.Annotations[meta.ReconcileRequestAnnotation], token, issued) &&
		!covers(hr.Status.LastHandledReconcileAt, token, issued)
}

// carries reports whether hr's valuesFrom has acct's entry.
func carries(hr *helmv2.HelmRelease, acct *credv1.CredentialAccount) bool {
	if acct.Spec.ValuesFrom == nil {
		return false
	}
	want := valuesRef(acct)
	for _, v := range hr.Spec.ValuesFrom {
		v.Optional = false
		if v == want {
			return true
		}
	}
	return false
}
