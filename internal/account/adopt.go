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
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// A running consumer of a platform plaintext may read it from a Secret it
// cannot be pointed away from: an existing MariaDB's
// rootPasswordSecretKeyRef (immutable once set) names the chart-rendered
// <release>-credentials. The account names that key in
// spec.plaintext.secretRef, and the Secret passes to credo in two steps of
// `kubectl credo migrate`, each a patch conditional on the version read:
//
//   - KeepFromHelm, before the chart stops rendering it: helm.sh/resource-policy:
//     keep, so that Helm leaves it when it drops it from the release;
//   - Adopt, once no Helm release renders it: Helm's ownership metadata
//     goes (no later release takes it back), the account's UID is stamped
//     in <domain>/plaintext-of, and the HelmRelease owns it, so that
//     garbage collection removes it with the release.
//
// From then on Deliver writes the account's plaintext into that one key,
// on every rotation and repair; the Secret's other keys are never read or
// written.

// Helm's metadata on the objects of a release.
const (
	helmManagedBy        = "app.kubernetes.io/managed-by"
	helmManagedByHelm    = "Helm"
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
	// HelmResourcePolicy: keep leaves the object when a release drops it.
	HelmResourcePolicy     = "helm.sh/resource-policy"
	HelmResourcePolicyKeep = "keep"
)

// ErrNotAdopted refuses a delivery into a Secret not adopted for the
// account.
var ErrNotAdopted = errors.New("not adopted for this account")

// ErrNotRendered refuses to keep or adopt a Secret that is not an object
// of the release's own Helm release: credo takes over only the chart's
// Secret, never one of another release or one made by hand.
var ErrNotRendered = errors.New("not an object of the HelmRelease's Helm release")

// RenderedBy reports whether s carries the Helm metadata of hr's Helm
// release (its release name and namespace, as helm-controller names it).
func RenderedBy(s *corev1.Secret, hr *helmv2.HelmRelease) bool {
	return s.Annotations[helmReleaseName] == hr.GetReleaseName() && s.Annotations[helmReleaseNamespace] == hr.GetReleaseNamespace()
}

// OwnedBy reports whether hr owns s.
func OwnedBy(s *corev1.Secret, hr *helmv2.HelmRelease) bool {
	for _, o := range s.OwnerReferences {
		if o.UID == hr.UID {
			return true
		}
	}
	return false
}

// Adoptable says whether s may be adopted for acct of release hr, where
// live reports whether a UID names an existing CredentialAccount: nil when
// it may, ErrClaimed when another existing account holds it, and
// ErrNotRendered when it is not the release's (its Helm metadata names
// another release, or none, and it was not adopted for an account of this
// release that is gone since).
func (k Keys) Adoptable(s *corev1.Secret, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, live func(uid string) bool) error {
	uid := s.Annotations[k.PlaintextOf()]
	switch {
	case k.AdoptedFor(s, acct):
		return nil
	case uid != "" && live(uid):
		return ErrClaimed
	case uid != "" && OwnedBy(s, hr):
		// Adopted for an account of this release that was deleted and
		// declared again.
		return nil
	case RenderedBy(s, hr):
		return nil
	}
	return ErrNotRendered
}

// PlaintextOf is the annotation, on a Secret adopted for a platform
// plaintext account's spec.plaintext.secretRef, holding the account's UID.
func (k Keys) PlaintextOf() string { return k.domain() + "/plaintext-of" }

// AdoptedFor reports whether s was adopted for acct.
func (k Keys) AdoptedFor(s *corev1.Secret, acct *credv1.CredentialAccount) bool {
	return s.Annotations[k.PlaintextOf()] == string(acct.UID) && acct.UID != ""
}

// KeptFromHelm reports whether s carries helm.sh/resource-policy: keep.
func KeptFromHelm(s *corev1.Secret) bool {
	return s.Annotations[HelmResourcePolicy] == HelmResourcePolicyKeep
}

// ReadReferenced returns the Secret acct's spec.plaintext.secretRef names,
// read uncached; nil, without error, when there is none or acct names none.
func (w *Writer) ReadReferenced(ctx context.Context, acct *credv1.CredentialAccount) (*corev1.Secret, error) {
	ref := referenced(acct)
	if ref == nil {
		return nil, nil
	}
	return w.read(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: ref.Name})
}

func referenced(acct *credv1.CredentialAccount) *credv1.SecretKeyRef {
	if acct.Spec.Plaintext == nil {
		return nil
	}
	return acct.Spec.Plaintext.SecretRef
}

// KeepFromHelm stamps helm.sh/resource-policy: keep on s, as read, an
// object of hr's Helm release (ErrNotRendered otherwise).
func (w *Writer) KeepFromHelm(ctx context.Context, hr *helmv2.HelmRelease, s *corev1.Secret) (*corev1.Secret, error) {
	if KeptFromHelm(s) {
		return s, nil
	}
	if !RenderedBy(s, hr) {
		return nil, fmt.Errorf("Secret %s: %w", s.Name, ErrNotRendered)
	}
	next := s.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[HelmResourcePolicy] = HelmResourcePolicyKeep
	return w.patch(ctx, s, next)
}

// Adopt takes s, as read, for acct: Helm's ownership metadata goes, the
// account's UID is stamped and hr owns it. A Secret Adoptable refuses is
// refused with its error.
func (w *Writer) Adopt(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, s *corev1.Secret, live func(uid string) bool) (*corev1.Secret, error) {
	if err := w.Keys.Adoptable(s, acct, hr, live); err != nil {
		return nil, fmt.Errorf("Secret %s: %w", s.Name, err)
	}
	next := s.DeepCopy()
	if next.Labels[helmManagedBy] == helmManagedByHelm {
		delete(next.Labels, helmManagedBy)
	}
	delete(next.Annotations, helmReleaseName)
	delete(next.Annotations, helmReleaseNamespace)
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[w.Keys.PlaintextOf()] = string(acct.UID)
	if !OwnedBy(next, hr) {
		next.OwnerReferences = append(next.OwnerReferences, release.OwnerReference(hr))
	}
	return w.patch(ctx, s, next)
}

// Deliver writes plaintext into the key acct's spec.plaintext.secretRef
// names of s, as read, when it differs; it reports whether it wrote. A
// Secret not adopted for acct is refused (ErrNotAdopted).
func (w *Writer) Deliver(ctx context.Context, acct *credv1.CredentialAccount, s *corev1.Secret, plaintext string) (bool, error) {
	ref := referenced(acct)
	if ref == nil {
		return false, nil
	}
	if !w.Keys.AdoptedFor(s, acct) {
		return false, fmt.Errorf("Secret %s: %w", s.Name, ErrNotAdopted)
	}
	if plaintext == "" {
		return false, fmt.Errorf("Secret %s: no password to write into key %s", s.Name, ref.Key)
	}
	if v, ok := s.Data[ref.Key]; ok && string(v) == plaintext {
		return false, nil
	}
	next := s.DeepCopy()
	if next.Data == nil {
		next.Data = map[string][]byte{}
	}
	next.Data[ref.Key] = []byte(plaintext)
	delete(next.StringData, ref.Key)
	if _, err := w.patch(ctx, s, next); err != nil {
		return false, err
	}
	return true, nil
}

// patch writes next over cur, the version read, as a merge patch carrying
// cur's resourceVersion (the precondition), under credo's field manager. A
// patch, not an apply: adoption removes fields another manager set, and
// these Secrets hold keys credo never owns.
func (w *Writer) patch(ctx context.Context, cur, next *corev1.Secret) (*corev1.Secret, error) {
	if cur.ResourceVersion == "" {
		return nil, fmt.Errorf("writing Secret %s: no resourceVersion to write over", cur.Name)
	}
	if err := w.Client.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner)); err != nil {
		return nil, fmt.Errorf("writing Secret %s: %w", cur.Name, err)
	}
	return next, nil
}
