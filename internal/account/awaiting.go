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
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// An account's Secret exists before its HelmRelease does, so that a chart
// reading it when it first renders finds it (seed 002: "bootstrap ordering
// is free"). Until the release exists, the Secret is owned by the
// CredentialAccount (not a controller reference, and not blocking its
// deletion: an account deleted first takes its Secret with it), carries no
// release UID, and names the release it awaits in <domain>/awaiting-release.
// Once the release exists, SetMetadata hands the Secret over to it: the
// owner reference becomes the HelmRelease's, the release UID is stamped and
// the annotation dropped, in one update conditional on the version read;
// the password is not touched. A platform account's kept password is bound
// meanwhile to the namespace and the release's name only (a pending
// Binding), and completed with the release's UID when it is adopted.

// AwaitingRelease is the annotation naming, on an account Secret written
// before its HelmRelease existed, the release it awaits. The
// credo-account-secrets admission policy admits its change only from the
// account writers, like the rest of the record.
func (k Keys) AwaitingRelease() string { return k.domain() + "/awaiting-release" }

// Awaits reports whether the account Secret s was written, for the
// account uid, before its release existed, and awaits the release of that
// name: it carries the account's UID, the annotation naming the release,
// and no release UID.
func (k Keys) Awaits(s metav1.Object, uid types.UID, releaseName string) bool {
	return k.BelongsTo(s, uid) && s.GetAnnotations()[k.AwaitingRelease()] == releaseName && s.GetLabels()[k.ReleaseUID] == ""
}

// AccountOwnerReference is the owner reference to acct an account Secret
// carries before its release exists: garbage collection removes the
// Secret with the account. It is no controller reference and does not
// block the account's deletion.
func AccountOwnerReference(acct *credv1.CredentialAccount) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         credv1.GroupVersion.String(),
		Kind:               credv1.CredentialAccountKind,
		Name:               acct.Name,
		UID:                acct.UID,
		Controller:         ptr.To(false),
		BlockOwnerDeletion: ptr.To(false),
	}
}

// ownership sets on s the owner of an account Secret, its release UID and
// the awaiting-release annotation: owned by hr, with its UID, or, while
// there is no release (hr nil), owned by acct and awaiting the release.
func (k Keys) ownership(s *corev1.Secret, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease) {
	if hr == nil {
		delete(s.Labels, k.ReleaseUID)
		s.Annotations[k.AwaitingRelease()] = acct.Spec.Release
		s.OwnerReferences = []metav1.OwnerReference{AccountOwnerReference(acct)}
		return
	}
	delete(s.Annotations, k.AwaitingRelease())
	s.Labels[k.ReleaseUID] = string(hr.UID)
	s.OwnerReferences = []metav1.OwnerReference{release.OwnerReference(hr)}
}
