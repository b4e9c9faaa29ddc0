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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/verifier"
)

// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts/status,verbs=get;patch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=patch

var credentialAccountSummary = reconciler.Summary{
	FieldOwner: CredentialFieldOwner,
	Message:    readyMessage,
	NegativePolarity: []string{
		credv1.FormatRefusedCondition,
		credv1.SecretFailedCondition,
		credv1.DeliveryFailedCondition,
	},
	// Applied says whether the engine uses the current verifier, and
	// ReleasePending that the release does not exist yet; neither is part
	// of Ready.
	Informational: []string{credv1.AppliedCondition, credv1.ReleasePendingCondition},
}

// Reconcile reconciles one CredentialAccount.
func (r *CredentialAccountReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconciler.Run(ctx, req, &credv1.CredentialAccount{}, reconciler.Steps[*credv1.CredentialAccount]{
		Client:    r.Client,
		Metrics:   r.Metrics,
		Summary:   credentialAccountSummary,
		Missing:   func(ctx context.Context) error { return r.sweepAccount(ctx, req.NamespacedName) },
		Finalize:  r.dropLegacyFinalizer,
		Suspended: func(acct *credv1.CredentialAccount) bool { return acct.Spec.Suspend },
		Prepare:   r.dropLegacyFinalizer,
		Observed:  func(acct *credv1.CredentialAccount) int64 { return acct.Status.ObservedGeneration },
		Reconcile: func(ctx context.Context, acct *credv1.CredentialAccount) (ctrl.Result, error) {
			// Two steps: the account Secret and its delivery, which make
			// Ready; then Applied, what its consumers took, which never
			// affects Ready and is observed however far the first got.
			hr, secret, err := r.reconcileAccount(ctx, acct)
			r.reconcileApplied(ctx, acct, hr, secret)
			return ctrl.Result{}, err
		},
	})
}

// reconcileAccount keeps the account Secret and its delivery, and returns
// the release (nil when it cannot be read, or does not exist) and the
// account Secret (nil when none is in place) for the Applied step. While
// the release does not exist, the Secret is written all the same, owned by
// the account (credentialaccount_pending.go).
func (r *CredentialAccountReconciler) reconcileAccount(ctx context.Context, acct *credv1.CredentialAccount) (*helmv2.HelmRelease, *corev1.Secret, error) {
	// The release is read first, so that every Warning is recorded on it
	// too; a release that cannot be read is reported after a refused format.
	hr, hrErr := r.release(ctx, acct)
	ev := r.events(hr)
	if hrErr == nil {
		markReleasePending(acct, hr == nil)
	}
	f, err := r.format(acct)
	if err != nil {
		return hr, nil, r.fail(ev, acct, credv1.FormatRefusedCondition, err)
	}
	conditions.Delete(acct, credv1.FormatRefusedCondition)

	switch {
	case hrErr != nil:
		return nil, nil, r.fail(ev, acct, credv1.SecretFailedCondition, hrErr)
	case hr == nil:
		if err := goneWithRelease(acct); err != nil {
			return nil, nil, r.fail(ev, acct, credv1.SecretFailedCondition, err)
		}
	case !hr.DeletionTimestamp.IsZero():
		// Its Secret goes with it, by garbage collection: nothing to write.
		return hr, nil, r.fail(ev, acct, credv1.SecretFailedCondition,
			reconciler.NewWaiting(credv1.HelmReleaseDeletingReason, "HelmRelease %s is being deleted", acct.Spec.Release))
	}
	if err := r.checkAccountCollision(ctx, acct); err != nil {
		return hr, nil, r.fail(ev, acct, credv1.SecretFailedCondition, err)
	}
	if hr == nil {
		err = r.checkReservedPending(ctx, acct)
	} else {
		err = r.checkReserved(ctx, acct, hr)
	}
	if err != nil {
		return hr, nil, r.fail(ev, acct, credv1.SecretFailedCondition, err)
	}
	secret, err := r.ensureSecret(ctx, acct, hr, f)
	if err != nil {
		if reconciler.ReasonOf(err) == meta.FailedReason {
			err = &reconciler.Generic{Reason: credv1.WriteFailedReason, Err: err}
		}
		return hr, secret, r.fail(ev, acct, credv1.SecretFailedCondition, err)
	}
	conditions.Delete(acct, credv1.SecretFailedCondition)
	before := lastOperation(acct)
	r.recordSecret(acct, secret)

	switch {
	case hr == nil:
		// Nothing to deliver to yet: the release's valuesFrom entry is
		// written once it exists.
	case acct.Spec.ValuesFrom != nil:
		if err := r.deliverValues(ctx, acct, hr, before); err != nil {
			return hr, secret, r.fail(ev, acct, credv1.DeliveryFailedCondition, err)
		}
	default:
		// valuesFrom was dropped from the spec: its entry goes too.
		if err := r.removeValues(ctx, acct); err != nil {
			return hr, secret, r.fail(ev, acct, credv1.DeliveryFailedCondition, err)
		}
	}
	if err := r.deliverPlaintext(ctx, acct, secret); err != nil {
		return hr, secret, r.fail(ev, acct, credv1.DeliveryFailedCondition, err)
	}
	conditions.Delete(acct, credv1.DeliveryFailedCondition)
	return hr, secret, nil
}

// format resolves the account's format (account.FormatOf); a refusal
// stalls with its reason.
func (r *CredentialAccountReconciler) format(acct *credv1.CredentialAccount) (verifier.Format, error) {
	f, err := account.FormatOf(acct)
	var refusal *account.FormatRefusal
	if errors.As(err, &refusal) {
		return nil, &reconciler.Stalling{Reason: refusal.Reason, Err: refusal.Err}
	}
	return f, err
}

// checkAccountCollision refuses an account whose Secret name another live
// account of the namespace maps to, unless it is the one that keeps the
// Secret: a platform account (the one whose UID the Secret carries first),
// else the account whose UID the Secret carries, else the oldest (then the
// first by name). A tenant's account can thus never displace a platform
// account, whatever it is named, whenever it is created and whatever is
// written on the Secret, nor a tenant account already holding its Secret.
func (r *CredentialAccountReconciler) checkAccountCollision(ctx context.Context, acct *credv1.CredentialAccount) error {
	name := acct.SecretName()
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list, client.InNamespace(acct.Namespace), client.MatchingFields{accountSecretIndex: name}); err != nil {
		return fmt.Errorf("listing accounts: %w", err)
	}
	candidates := []*credv1.CredentialAccount{acct}
	for i := range list.Items {
		if other := &list.Items[i]; other.UID != acct.UID && other.DeletionTimestamp.IsZero() {
			candidates = append(candidates, other)
		}
	}
	if len(candidates) == 1 {
		return nil
	}
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: name}, s); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading Secret %s: %w", name, err)
	}
	keeper := collisionKeeper(candidates, func(a *credv1.CredentialAccount) bool {
		return r.AccountKeys.BelongsTo(s, a.UID)
	})
	if keeper.UID == acct.UID {
		return nil
	}
	return reconciler.NewStalling(credv1.AccountCollisionReason,
		"accounts %s and %s both map to Secret %s, which stays %s's; rename the username of %s",
		acct.Name, keeper.Name, name, keeper.Name, acct.Name)
}

// checkReserved refuses a tenant account whose Secret is the Secret of a
// platform account an AccountSource derives for its release, whether that
// account exists yet or not.
func (r *CredentialAccountReconciler) checkReserved(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease) error {
	if acct.GetOwner() == credv1.OwnerPlatform {
		return nil
	}
	var sources credv1.AccountSourceList
	if err := r.List(ctx, &sources); err != nil {
		return fmt.Errorf("listing AccountSources: %w", err)
	}
	name := acct.SecretName()
	for i := range sources.Items {
		src := &sources.Items[i]
		// A source that may select the release (its chart cannot be
		// resolved now) reserves its names too: fail closed.
		ok, err := sourceSelects(ctx, r.Client, src, hr)
		var unresolved *release.UnresolvedError
		if !ok && !errors.As(err, &unresolved) {
			continue
		}
		u, err := reservedUsername(ctx, r.APIReader, src, hr, name)
		if err != nil {
			return err
		}
		if u != "" {
			return reconciler.NewStalling(credv1.AccountCollisionReason,
				"Secret %s is reserved for the platform account %q of AccountSource %s; rename the username of %s", name, u, src.Name, acct.Name)
		}
	}
	return nil
}

// collisionKeeper picks, among accounts that map to one Secret, the one
// that keeps it: a platform account (the holder first), else the holder,
// else the oldest, else the first by name.
func collisionKeeper(candidates []*credv1.CredentialAccount, holds func(*credv1.CredentialAccount) bool) *credv1.CredentialAccount {
	// A platform account comes first: the annotation that says who holds
	// the Secret is on a Secret in the tenant's namespace, and must never
	// outrank the platform.
	rank := func(a *credv1.CredentialAccount) int {
		platform := a.GetOwner() == credv1.OwnerPlatform
		switch {
		case platform && holds(a):
			return 0
		case platform:
			return 1
		case holds(a):
			return 2
		}
		return 3
	}
	best := candidates[0]
	for _, c := range candidates[1:] {
		rc, rb := rank(c), rank(best)
		switch {
		case rc != rb:
			if rc < rb {
				best = c
			}
		case !c.CreationTimestamp.Equal(&best.CreationTimestamp):
			if c.CreationTimestamp.Before(&best.CreationTimestamp) {
				best = c
			}
		case c.Name < best.Name:
			best = c
		}
	}
	return best
}

// recordSecret copies the Secret's name, origin and history into the status.
func (r *CredentialAccountReconciler) recordSecret(acct *credv1.CredentialAccount, s *corev1.Secret) {
	acct.Status.SecretName = s.Name
	acct.Status.Origin = credv1.Origin(s.Annotations[r.AccountKeys.Origin])
	acct.Status.History = account.ParseHistory(s.Annotations[r.AccountKeys.History])
	acct.Status.LastHandledRotate = s.Annotations[r.AccountKeys.Rotate]
	if n := len(acct.Status.History); n > 0 {
		at := acct.Status.History[n-1].At
		acct.Status.LastChange = &at
	}
}
