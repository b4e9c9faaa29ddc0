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
	"crypto/sha256"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// accountPending holds while the account is Ready and its release is
// pending.
func accountPending(a *credv1.CredentialAccount) bool {
	return accountReady(a) && conditions.IsTrue(a, credv1.ReleasePendingCondition)
}

// awaitingSecret waits for the account Secret name of ns to be written
// before its release: owned by the account acct alone (no controller
// reference, not blocking its deletion), no release UID, awaiting the
// release. It returns the Secret.
func awaitingSecret(g Gomega, acct *credv1.CredentialAccount) *corev1.Secret {
	var s corev1.Secret
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: acct.Namespace, Name: acct.SecretName()}, &s)).To(Succeed())
		g.Expect(s.OwnerReferences).To(HaveLen(1))
		ref := s.OwnerReferences[0]
		g.Expect(ref.Kind).To(Equal(credv1.CredentialAccountKind))
		g.Expect(ref.APIVersion).To(Equal(credv1.GroupVersion.String()))
		g.Expect(ref.UID).To(Equal(acct.UID))
		g.Expect(ref.Controller).To(Equal(ptr.To(false)))
		g.Expect(ref.BlockOwnerDeletion).To(Equal(ptr.To(false)))
		g.Expect(s.Labels).NotTo(HaveKey(testAccountKeys.ReleaseUID))
		g.Expect(s.Annotations).To(HaveKeyWithValue(testAccountKeys.AwaitingRelease(), acct.Spec.Release))
		g.Expect(s.Annotations).To(HaveKeyWithValue(testAccountKeys.AccountUID, string(acct.UID)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return &s
}

// handedOver waits for the Secret s to be owned by hr: the same Secret (its
// UID), the release's UID stamped, awaiting nothing. It returns it.
func handedOver(g Gomega, s *corev1.Secret, hr *helmv2.HelmRelease) *corev1.Secret {
	var got corev1.Secret
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(s), &got)).To(Succeed())
		g.Expect(got.UID).To(Equal(s.UID), "the same Secret")
		g.Expect(got.OwnerReferences).To(ConsistOf(HaveField("UID", hr.UID)))
		g.Expect(got.Labels).To(HaveKeyWithValue(testAccountKeys.ReleaseUID, string(hr.UID)))
		g.Expect(got.Annotations).NotTo(HaveKey(testAccountKeys.AwaitingRelease()))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return &got
}

// passwordHash is the SHA-256 of what a Secret stores, to compare without
// printing it.
func passwordHash(s *corev1.Secret) [32]byte { return sha256.Sum256(s.Data[credv1.PasswordKey]) }

// A tenant account declared before its release has its Secret at once
// (Ready, ReleasePending), owned by the account; the release, once created,
// takes the same Secret over with the same password; deleted, the release
// takes it with it, and the account, still declared, has a new one
// awaiting the next release.
func TestAnAccountsSecretIsWrittenBeforeItsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := newAccount(t, ns, "pg-app", "pg", "app", verifier.SCRAMSHA256)

	a := accountWith(g, ns, acct.Name, accountPending)
	g.Expect(conditions.GetReason(a, credv1.ReleasePendingCondition)).To(Equal(credv1.HelmReleaseNotFoundReason))
	g.Expect(conditions.GetMessage(a, meta.ReadyCondition)).To(ContainSubstring("owned by the CredentialAccount until HelmRelease pg exists"))
	g.Expect(conditions.GetReason(a, credv1.AppliedCondition)).To(Equal(credv1.NotIssuedReason))
	g.Expect(a.Status.Origin).To(Equal(credv1.OriginNotIssued))
	g.Expect(testenv.KStatus(t, a)).To(BeEquivalentTo("Current"), "health checks pass before the release exists")
	before := awaitingSecret(g, acct)
	g.Expect(scramShape.Match(before.Data[credv1.PasswordKey])).To(BeTrue(), "a NotIssued verifier (value not printed)")

	hr := env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	after := handedOver(g, before, hr)
	g.Expect(passwordHash(after) == passwordHash(before)).To(BeTrue(), "the password is kept (values not printed)")
	a = accountWith(g, ns, acct.Name, func(a *credv1.CredentialAccount) bool {
		return accountReady(a) && conditions.Get(a, credv1.ReleasePendingCondition) == nil
	})
	g.Expect(conditions.GetMessage(a, meta.ReadyCondition)).To(Equal("account Secret is in place"))
	g.Eventually(func() bool { return hasEvent(ctx, ns, acct.Name, credv1.SecretHandedOverReason) }, 10*time.Second, 100*time.Millisecond).
		Should(BeTrue(), "a SecretHandedOver event")

	// Deleting the release collects its Secret; the account, still
	// declared, gets a new one, awaiting the next release.
	g.Expect(env.Client.Delete(ctx, hr)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(after), &s)).To(Succeed())
		g.Expect(s.UID).NotTo(Equal(after.UID), "the release's Secret is gone")
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	again := awaitingSecret(g, acct)
	g.Expect(passwordHash(again) == passwordHash(after)).To(BeFalse(), "nothing of the deleted application carries over (values not printed)")
	assertNoSecretMaterial(g, ns, string(before.Data[credv1.PasswordKey]), string(again.Data[credv1.PasswordKey]))
}

// A platform account declared before its release has its Secret with the
// verifier of a kept password, bound to the namespace and the release's
// name only (pending): the sweep keeps it while the account exists, and the
// release, once created, completes the binding and keeps the password.
func TestAPlatformAccountsPasswordIsKeptBeforeItsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := newAccount(t, ns, "pg-postgres", "pg", "postgres", verifier.SCRAMSHA256, func(a *credv1.CredentialAccount) {
		a.Spec.Owner = credv1.OwnerPlatform
	})
	accountWith(g, ns, acct.Name, accountPending)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	before := awaitingSecret(g, acct)
	g.Expect(before.Annotations).To(HaveKeyWithValue(testAccountKeys.Origin, string(credv1.OriginGenerated)))

	var nsObj corev1.Namespace
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
	keptKey := client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(acct)}
	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, keptKey, &kept)).To(Succeed())
	g.Expect(kept.Labels).To(HaveKeyWithValue(testAccountKeys.NamespaceUID, string(nsObj.UID)))
	g.Expect(kept.Labels).NotTo(HaveKey(testAccountKeys.ReleaseUID), "pending: no release UID yet")
	g.Expect(kept.Annotations).To(HaveKeyWithValue(testAccountKeys.Release, ns+"/pg"))
	f, err := verifier.Lookup(verifier.SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(verifier.Matches(f, "postgres", string(kept.Data[credv1.PasswordKey]), string(before.Data[credv1.PasswordKey]))).To(BeTrue(),
		"the Secret holds the kept password's verifier (values not printed)")

	// The sweep does not take a pending record for one of a deleted release.
	r := &CredentialAccountReconciler{Client: env.Client, APIReader: env.Client, AccountKeys: testAccountKeys, PlatformNamespace: testPlatformNamespace}
	_, err = r.sweepAll(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var swept corev1.Secret
	g.Expect(env.Client.Get(ctx, keptKey, &swept)).To(Succeed(), "the pending kept password stays while its account exists")
	g.Expect(swept.UID).To(Equal(kept.UID))

	hr := env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	after := handedOver(g, before, hr)
	g.Expect(passwordHash(after) == passwordHash(before)).To(BeTrue(), "the verifier is kept (values not printed)")
	g.Eventually(func(g Gomega) {
		var k corev1.Secret
		g.Expect(env.Client.Get(ctx, keptKey, &k)).To(Succeed())
		g.Expect(k.UID).To(Equal(kept.UID), "the same kept password")
		g.Expect(k.Labels).To(HaveKeyWithValue(testAccountKeys.ReleaseUID, string(hr.UID)), "the binding is completed")
		g.Expect(string(k.Data[credv1.PasswordKey]) == string(kept.Data[credv1.PasswordKey])).To(BeTrue(), "the same password (values not printed)")
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	accountWith(g, ns, acct.Name, func(a *credv1.CredentialAccount) bool {
		return accountReady(a) && conditions.Get(a, credv1.ReleasePendingCondition) == nil && a.Status.Origin == credv1.OriginGenerated
	})
	assertNoSecretMaterial(g, ns, string(kept.Data[credv1.PasswordKey]), string(before.Data[credv1.PasswordKey]))
}

// An account deleted before its release existed leaves nothing: its
// Secret (owned by it) and its kept password go with it.
func TestAnAccountDeletedBeforeItsReleaseLeavesNoSecret(t *testing.T) {
	for _, owner := range []credv1.AccountOwner{credv1.OwnerTenant, credv1.OwnerPlatform} {
		t.Run(string(owner), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			acct := newAccount(t, ns, "db-root", "db", "root", verifier.MySQLNative, func(a *credv1.CredentialAccount) {
				a.Spec.Owner = owner
			})
			accountWith(g, ns, acct.Name, accountPending)
			s := awaitingSecret(g, acct)
			keptKey := client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(acct)}

			g.Expect(env.Client.Delete(ctx, acct)).To(Succeed())
			g.Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})) &&
					apierrors.IsNotFound(env.Client.Get(ctx, keptKey, &corev1.Secret{}))
			}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "the account's Secret and kept password go with it")
		})
	}
}

// Before its release exists, which AccountSources select it is unknown: a
// tenant account whose Secret a source's Static platform entry reserves for
// a release of its name is refused until the release shows the source does
// not select it.
func TestATenantAccountReservedForAPlatformAccountWaitsForItsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "root-of-" + ns},
		Spec: credv1.AccountSourceSpec{Chart: "mariadb-" + ns, Sources: []credv1.AccountSourceEntry{{
			Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "root"},
			Template: credv1.AccountTemplate{Format: credv1.Format{Name: verifier.MySQLNative}, Owner: credv1.OwnerPlatform},
		}}},
	}
	g.Expect(env.Client.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	acct := newAccount(t, ns, "db-root", "db", "ROOT", verifier.MySQLNative)

	a := accountWith(g, ns, acct.Name, accountReason(credv1.SecretFailedCondition, credv1.AccountCollisionReason))
	g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring(`reserved for the platform account "root" of AccountSource root-of-` + ns))
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: acct.SecretName()}, &corev1.Secret{}))
	}, 2*time.Second, 200*time.Millisecond).Should(BeTrue(), "no Secret is written")

	// The release is another chart's: the source does not select it.
	env.NewHelmRelease(t, ns, "db", "postgres", nil)
	accountWith(g, ns, acct.Name, accountReady)
}

// hasEvent reports whether an event of reason is recorded on the
// CredentialAccount name of ns.
func hasEvent(ctx context.Context, ns, name, reason string) bool {
	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return false
	}
	for _, e := range events.Items {
		if e.Reason == reason && e.InvolvedObject.Kind == credv1.CredentialAccountKind && e.InvolvedObject.Name == name {
			return true
		}
	}
	return false
}

// A pending kept password (no release UID) is swept with its namespace or
// its account, never for want of a release; one bound to a release goes
// with it.
func TestKeptGoneHoldsAPendingRecordToItsAccount(t *testing.T) {
	r := &CredentialAccountReconciler{AccountKeys: testAccountKeys, PlatformNamespace: testPlatformNamespace}
	kept := func(releaseUID string) *metav1.PartialObjectMetadata {
		s := &metav1.PartialObjectMetadata{}
		s.Name, s.Namespace = "tenant.db.root.account", testPlatformNamespace
		s.Annotations = map[string]string{testAccountKeys.AccountUID: "acct", testAccountKeys.Release: "tenant/db"}
		s.Labels = map[string]string{testAccountKeys.NamespaceUID: "ns"}
		if releaseUID != "" {
			s.Labels[testAccountKeys.ReleaseUID] = releaseUID
		}
		return s
	}
	live := func(uids ...types.UID) liveSet {
		l := liveSet{}
		for _, u := range uids {
			l[u] = true
		}
		return l
	}
	for _, tc := range []struct {
		name                          string
		record                        *metav1.PartialObjectMetadata
		accounts, namespaces, release liveSet
		why                           string
	}{
		{"a pending record of a live account stays", kept(""), live("acct"), live("ns"), live(), ""},
		{"a pending record of a deleted account goes", kept(""), live(), live("ns"), live(), metrics.SweptAccountDeleted},
		{"a pending record of a deleted namespace goes", kept(""), live("acct"), live(), live(), metrics.SweptNamespaceDeleted},
		{"a bound record of a live release stays", kept("rel"), live("acct"), live("ns"), live("rel"), ""},
		{"a bound record of a deleted release goes", kept("rel"), live("acct"), live("ns"), live(), metrics.SweptReleaseDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, why := r.keptGone(tc.record, tc.accounts, tc.namespaces, tc.release)
			NewWithT(t).Expect(why).To(Equal(tc.why))
			NewWithT(t).Expect(ns).To(Equal("tenant"))
		})
	}
}
