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
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// A record is bound to the incarnations it was made for, by UID, never by
// name alone: no finalizer sits in a tenant namespace, so a namespace or a
// release can go while the credential-controller is down, and come back
// under the same name. The account Secret carries the UID of its
// HelmRelease (a Secret of an earlier release of the name is never
// adopted); a kept platform password carries the UIDs of the tenant
// namespace and of the release, which the controller's sweep checks.
// Made before its release exists, a kept password carries the namespace's
// UID and the release's name only (pending), and the sweep holds it to its
// account until the release adopts it.

// Binding is the tenant namespace and the HelmRelease a kept platform
// password is bound to.
type Binding struct {
	// NamespaceUID is the UID of the account's namespace.
	NamespaceUID types.UID
	// Release is the HelmRelease.
	Release types.NamespacedName
	// ReleaseUID is its UID.
	ReleaseUID types.UID
}

// NewBinding is the binding of a record made for hr, in the namespace of
// UID nsUID.
func NewBinding(nsUID types.UID, hr *helmv2.HelmRelease) *Binding {
	return &Binding{NamespaceUID: nsUID, Release: types.NamespacedName{Namespace: hr.Namespace, Name: hr.Name}, ReleaseUID: hr.UID}
}

// NewPendingBinding is the binding of a record made, in the namespace of
// UID nsUID, before the HelmRelease named release exists: it has no
// release UID until the release adopts it (awaiting.go).
func NewPendingBinding(nsUID types.UID, release types.NamespacedName) *Binding {
	return &Binding{NamespaceUID: nsUID, Release: release}
}

// Pending reports whether b awaits its release: it records no release UID.
func (b Binding) Pending() bool { return b.ReleaseUID == "" }

// stampBinding records b on s.
func (k Keys) stampBinding(s *corev1.Secret, b *Binding) {
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Labels[k.NamespaceUID] = string(b.NamespaceUID)
	if b.Pending() {
		delete(s.Labels, k.ReleaseUID)
	} else {
		s.Labels[k.ReleaseUID] = string(b.ReleaseUID)
	}
	s.Annotations[k.Release] = b.Release.String()
}

// BindingOf reads the binding recorded on a kept password; ok is false
// when none is (written before bindings were recorded). A binding without
// a release UID is pending (Binding.Pending): made before its release
// existed.
func (k Keys) BindingOf(o metav1.Object) (b Binding, ok bool) {
	ns, name, found := strings.Cut(o.GetAnnotations()[k.Release], "/")
	b = Binding{
		NamespaceUID: types.UID(o.GetLabels()[k.NamespaceUID]),
		Release:      types.NamespacedName{Namespace: ns, Name: name},
		ReleaseUID:   types.UID(o.GetLabels()[k.ReleaseUID]),
	}
	return b, found && b.NamespaceUID != ""
}

// boundTo reports whether s records exactly the binding b.
func (k Keys) boundTo(s metav1.Object, b *Binding) bool {
	got, ok := k.BindingOf(s)
	return ok && got == *b
}

// OfEarlierRelease reports whether the account Secret s of acct was made
// for an earlier HelmRelease of acct's release name than hr (nil: there is
// none now): it records another release UID, or (written before the UID was
// recorded) it is owner-referenced to a HelmRelease of the name with
// another UID. Such a Secret holds what an application deleted before hr was
// created had, and is never adopted. A Secret written for acct before its
// release existed (Awaits: no release UID, acct's UID, awaiting the release
// of its name) is adopted by hr: it is not of an earlier release.
func (k Keys) OfEarlierRelease(s metav1.Object, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease) bool {
	if uid := s.GetLabels()[k.ReleaseUID]; uid != "" {
		return hr == nil || uid != string(hr.UID)
	}
	if k.Awaits(s, acct.UID, acct.Spec.Release) {
		return false
	}
	for _, ref := range s.GetOwnerReferences() {
		if ref.Kind == helmv2.HelmReleaseKind && ref.Name == acct.Spec.Release && (hr == nil || ref.UID != hr.UID) {
			return true
		}
	}
	return false
}

// earlierBinding reports whether the kept password s is bound to another
// namespace or release than b's: it is of an earlier incarnation of the
// application. A pending binding (made before the release existed) is
// adopted by the release of its name: it is earlier only than a binding
// to another name.
func (k Keys) earlierBinding(s metav1.Object, b *Binding) bool {
	got, ok := k.BindingOf(s)
	switch {
	case !ok:
		return false
	case got.NamespaceUID != b.NamespaceUID:
		return true
	case got.Pending():
		return got.Release != b.Release
	}
	return got.ReleaseUID != b.ReleaseUID
}
