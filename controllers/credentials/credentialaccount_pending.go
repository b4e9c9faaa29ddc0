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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// An account's Secret is written before its HelmRelease exists (seed 002,
// "bootstrap ordering is free"): owned by the CredentialAccount, awaiting
// the release, and handed over to the HelmRelease when the watch sees it
// created (internal/account/awaiting.go). The account is Ready meanwhile,
// with the informational condition ReleasePending. This file holds what
// the pending state adds to the reconcile: the confirmation that the
// release is gone, the condition, and the reservation check that stands in
// for the release's.

// readyMessage is Ready's message on success: a pending release says so.
func readyMessage(obj reconciler.Object) string {
	if acct, ok := obj.(*credv1.CredentialAccount); ok && conditions.IsTrue(acct, credv1.ReleasePendingCondition) {
		return fmt.Sprintf("account Secret is in place, owned by the CredentialAccount until HelmRelease %s exists", acct.Spec.Release)
	}
	return "account Secret is in place"
}

// release reads acct's HelmRelease; nil, without error, when it does not
// exist. The cache's NotFound is confirmed by an uncached read, whose
// release is used when there is one: a release not in the cache yet (an
// account and its release created together) must never be taken for gone,
// because what the account then does (write a Secret awaiting the release,
// delete one made for an earlier release, drop a kept password bound to
// one) would undo the live release's.
func (r *CredentialAccountReconciler) release(ctx context.Context, acct *credv1.CredentialAccount) (*helmv2.HelmRelease, error) {
	key := client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}
	hr := &helmv2.HelmRelease{}
	err := r.Get(ctx, key, hr)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, hr)
	}
	switch {
	case err == nil:
		return hr, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	}
	return nil, fmt.Errorf("reading HelmRelease %s: %w", key.Name, err)
}

// markReleasePending sets ReleasePending: True while the release does not
// exist, removed once it does.
func markReleasePending(acct *credv1.CredentialAccount, pending bool) {
	if !pending {
		conditions.Delete(acct, credv1.ReleasePendingCondition)
		return
	}
	conditions.MarkTrue(acct, credv1.ReleasePendingCondition, credv1.HelmReleaseNotFoundReason,
		"HelmRelease %s does not exist yet; the account Secret is owned by the CredentialAccount until it does", acct.Spec.Release)
}

// goneWithRelease refuses to write anything for an account owned by its
// release (an AccountSource generated it) once that release is gone:
// garbage collection is deleting the account too.
func goneWithRelease(acct *credv1.CredentialAccount) error {
	group := helmv2.GroupVersion.Group
	for _, ref := range acct.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == group && ref.Kind == helmv2.HelmReleaseKind && ref.Name == acct.Spec.Release {
			return reconciler.NewWaiting(credv1.HelmReleaseDeletingReason,
				"HelmRelease %s is gone, and this account, which it owns, goes with it", acct.Spec.Release)
		}
	}
	return nil
}

// checkReservedPending stands in for checkReserved while the release does
// not exist: which AccountSources will select it is not known yet, so a
// tenant account whose Secret the Static platform entry of any source would
// reserve for a release of its name is refused (fail closed) until the
// release shows whether the source selects it. The usernames a ValuesMap
// entry derives come from the release's values, and are checked once it
// exists; until then the access API mints no password into a Secret that
// awaits its release (internal/accessapi), so a tenant account's Secret
// holds nothing its tenant knows before the check.
func (r *CredentialAccountReconciler) checkReservedPending(ctx context.Context, acct *credv1.CredentialAccount) error {
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
		for _, entry := range src.Spec.Sources {
			if entry.Template.Owner != credv1.OwnerPlatform || entry.Kind != credv1.SourceStatic || entry.Static == nil {
				continue
			}
			if credv1.AccountSecretName(acct.Spec.Release, entry.Static.Username) == name {
				return reconciler.NewStalling(credv1.AccountCollisionReason,
					"Secret %s is reserved for the platform account %q of AccountSource %s, should it select HelmRelease %s, which does not exist yet; rename the username of %s",
					name, entry.Static.Username, src.Name, acct.Spec.Release, acct.Name)
			}
		}
	}
	return nil
}
