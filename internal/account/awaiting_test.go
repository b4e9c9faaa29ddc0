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
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// testRelease is the HelmRelease of testAccount, of UID uid.
func testRelease(uid types.UID) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "tenant", UID: uid}}
}

// Before its release, an account Secret is the account's, awaiting the
// release; with the release, the release's, awaiting nothing.
func TestStampMetadataOwnsTheSecretByTheAccountUntilTheReleaseExists(t *testing.T) {
	g := NewWithT(t)
	acct := testAccount(credv1.OwnerTenant)
	s := &corev1.Secret{}
	testKeys.stampMetadata(s, acct, nil)
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{{
		APIVersion: credv1.GroupVersion.String(), Kind: credv1.CredentialAccountKind, Name: "db", UID: "uid-db",
		Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false),
	}}))
	g.Expect(s.Labels).NotTo(HaveKey(testKeys.ReleaseUID))
	g.Expect(s.Annotations).To(HaveKeyWithValue(testKeys.AwaitingRelease(), "pg"))
	g.Expect(testKeys.Awaits(s, acct.UID, "pg")).To(BeTrue())
	g.Expect(testKeys.Awaits(s, "another", "pg")).To(BeFalse(), "only for the account whose UID it carries")

	before := s.DeepCopy()
	hr := testRelease("rel-1")
	testKeys.stampMetadata(s, acct, hr)
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{release.OwnerReference(hr)}))
	g.Expect(s.Labels).To(HaveKeyWithValue(testKeys.ReleaseUID, "rel-1"))
	g.Expect(s.Annotations).NotTo(HaveKey(testKeys.AwaitingRelease()))
	g.Expect(metadataEqual(before, s, testKeys.AccountUID, testKeys.AwaitingRelease())).To(BeFalse(), "the handover is a write")
	g.Expect(ownedOnlyBy(before, hr.UID)).To(BeFalse(), "the account's owner reference is replaced by an update")
}

// A Secret made before the release is adopted by the release of its name;
// one made for another release, or for none when there is one, is not.
func TestOfEarlierRelease(t *testing.T) {
	acct := testAccount(credv1.OwnerTenant)
	secret := func(labels, annotations map[string]string, owners ...metav1.OwnerReference) *corev1.Secret {
		a := map[string]string{testKeys.AccountUID: string(acct.UID)}
		for k, v := range annotations {
			a[k] = v
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: a, OwnerReferences: owners}}
	}
	awaiting := map[string]string{testKeys.AwaitingRelease(): "pg"}
	forRelease := func(uid string) map[string]string { return map[string]string{testKeys.ReleaseUID: uid} }
	ownedBy := func(uid types.UID) metav1.OwnerReference { return release.OwnerReference(testRelease(uid)) }
	for _, tc := range []struct {
		name    string
		s       *corev1.Secret
		hr      *helmv2.HelmRelease
		earlier bool
	}{
		{"awaiting, the release created", secret(nil, awaiting, AccountOwnerReference(acct)), testRelease("rel-1"), false},
		{"awaiting, still no release", secret(nil, awaiting, AccountOwnerReference(acct)), nil, false},
		{"awaiting, whatever owner reference a tenant added", secret(nil, awaiting, ownedBy("rel-0")), testRelease("rel-1"), false},
		{"of this release", secret(forRelease("rel-1"), nil, ownedBy("rel-1")), testRelease("rel-1"), false},
		{"of an earlier release", secret(forRelease("rel-0"), nil, ownedBy("rel-0")), testRelease("rel-1"), true},
		{"of a release now gone", secret(forRelease("rel-0"), nil, ownedBy("rel-0")), nil, true},
		{"of a release, marked awaiting", secret(forRelease("rel-0"), awaiting, ownedBy("rel-0")), testRelease("rel-1"), true},
		{"legacy, owned by an earlier release", secret(nil, nil, ownedBy("rel-0")), testRelease("rel-1"), true},
		{"legacy, owned by a release now gone", secret(nil, nil, ownedBy("rel-0")), nil, true},
		{"legacy, owned by this release", secret(nil, nil, ownedBy("rel-1")), testRelease("rel-1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(testKeys.OfEarlierRelease(tc.s, acct, tc.hr)).To(Equal(tc.earlier))
		})
	}
}

// A kept password made before its release (pending) is adopted by the
// release of its name and kept while there is none; one bound to a
// release is of an earlier application for any other.
func TestEarlierBinding(t *testing.T) {
	key := types.NamespacedName{Namespace: "tenant", Name: "pg"}
	kept := func(b *Binding) *corev1.Secret {
		s := &corev1.Secret{}
		testKeys.stampBinding(s, b)
		return s
	}
	pending := NewPendingBinding("ns", key)
	bound := NewBinding("ns", testRelease("rel-1"))
	for _, tc := range []struct {
		name    string
		kept, b *Binding
		earlier bool
	}{
		{"pending, adopted by the release of its name", pending, bound, false},
		{"pending, still pending", pending, pending, false},
		{"pending, for another release name", NewPendingBinding("ns", types.NamespacedName{Namespace: "tenant", Name: "other"}), bound, true},
		{"pending, in an earlier namespace", NewPendingBinding("ns-0", key), bound, true},
		{"bound, the same release", bound, bound, false},
		{"bound, another release", NewBinding("ns", testRelease("rel-0")), bound, true},
		{"bound, its release now gone", bound, pending, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := kept(tc.kept)
			got, ok := testKeys.BindingOf(s)
			g.Expect(ok).To(BeTrue())
			g.Expect(got).To(Equal(*tc.kept))
			g.Expect(got.Pending()).To(Equal(tc.kept.ReleaseUID == ""))
			g.Expect(testKeys.earlierBinding(s, tc.b)).To(Equal(tc.earlier))
		})
	}
}
