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
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// No CredentialAccount carries a finalizer, and the one earlier versions
// put on every account is removed: a namespace deletion never waits on the
// controller.
func TestAccountsCarryNoFinalizerAndTheLegacyOneIsRemoved(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	newAccount(t, ns, "fresh", "db", "fresh", verifier.MySQLNative)
	newAccount(t, ns, "upgraded", "db", "upgraded", verifier.MySQLNative, func(a *credv1.CredentialAccount) {
		a.Finalizers = []string{LegacyFinalizer}
	})
	for _, name := range []string{"fresh", "upgraded"} {
		a := accountWith(g, ns, name, accountReady)
		g.Expect(a.Finalizers).To(BeEmpty(), "%s has no finalizer", name)
	}
}

// A suspended account is not reconciled, and so keeps the legacy
// finalizer until the start-up pass removes it: a namespace holding one
// must not wedge either.
func TestTheStartUpPassRemovesTheLegacyFinalizerOfSuspendedAccounts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := newAccount(t, ns, "dormant", "db", "dormant", verifier.MySQLNative, func(a *credv1.CredentialAccount) {
		a.Finalizers = []string{LegacyFinalizer}
		a.Spec.Suspend = true
	})
	r := &CredentialAccountReconciler{Client: env.Client}
	g.Expect(r.dropLegacyFinalizers(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	g.Expect(acct.Finalizers).To(BeEmpty())
}

// A platform account's kept password records the UIDs of the tenant
// namespace and of the release; the account Secret records the release's.
func TestRecordsAreBoundToNamespaceAndReleaseUIDs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := readyPlatformAccount(t, ns, "")
	var nsObj corev1.Namespace
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
	var hr helmv2.HelmRelease
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg"}, &hr)).To(Succeed())

	g.Eventually(func(g Gomega) {
		var kept corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(acct)}, &kept)).To(Succeed())
		g.Expect(kept.Labels).To(HaveKeyWithValue(testAccountKeys.NamespaceUID, string(nsObj.UID)))
		g.Expect(kept.Labels).To(HaveKeyWithValue(testAccountKeys.ReleaseUID, string(hr.UID)))
		g.Expect(kept.Annotations).To(HaveKeyWithValue(testAccountKeys.Release, ns+"/pg"))
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: acct.SecretName()}, &s)).To(Succeed())
		g.Expect(s.Labels).To(HaveKeyWithValue(testAccountKeys.ReleaseUID, string(hr.UID)))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// An application deleted and made again under the same name gets new
// Secrets, with new UIDs, and never a password of the earlier one: not
// even when its Secrets were orphaned (a tenant may delete its release
// with propagationPolicy Orphan), so that nothing garbage-collects them.
func TestApplicationMadeAgainNeverGetsTheEarlierPassword(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	platformAcct := readyPlatformAccount(t, ns, "")
	tenantAcct := newAccount(t, ns, "pg-app", "pg", "app", verifier.SCRAMSHA256)
	accountWith(g, ns, tenantAcct.Name, accountReady)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tenantAcct), tenantAcct)).To(Succeed())
	var hr helmv2.HelmRelease
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg"}, &hr)).To(Succeed())

	// The tenant's account is minted, as the access API mints it.
	w := &account.Writer{Client: env.Client, Keys: testAccountKeys, PlatformNamespace: testPlatformNamespace}
	f, err := verifier.Lookup(verifier.SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	cur, err := w.Read(ctx, tenantAcct)
	g.Expect(err).NotTo(HaveOccurred())
	minted, _, err := w.NewPassword(ctx, tenantAcct, cur, f, account.Record{Origin: credv1.OriginMinted, By: "tenant"})
	g.Expect(err).NotTo(HaveOccurred())

	keptKey := client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(platformAcct)}
	var oldKept, oldPlatform, oldTenant corev1.Secret
	g.Expect(env.Client.Get(ctx, keptKey, &oldKept)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: platformAcct.SecretName()}, &oldPlatform)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenantAcct.SecretName()}, &oldTenant)).To(Succeed())
	oldPassword := string(oldKept.Data[credv1.PasswordKey])

	g.Expect(env.Client.Delete(ctx, &hr, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(&hr), &helmv2.HelmRelease{}))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
	again := env.NewHelmRelease(t, ns, "pg", "postgres", nil)

	g.Eventually(func(g Gomega) {
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenantAcct.SecretName()}, &s)).To(Succeed())
		g.Expect(s.UID).NotTo(Equal(oldTenant.UID), "a new tenant account Secret")
		g.Expect(s.OwnerReferences).To(ConsistOf(HaveField("UID", again.UID)))
		g.Expect(s.Annotations).To(HaveKeyWithValue(testAccountKeys.Origin, string(credv1.OriginNotIssued)))
		g.Expect(verifier.Matches(f, "app", minted, string(s.Data[credv1.PasswordKey]))).To(BeFalse(),
			"the earlier minted password does not log in (values not printed)")

		var kept corev1.Secret
		g.Expect(env.Client.Get(ctx, keptKey, &kept)).To(Succeed())
		g.Expect(kept.UID).NotTo(Equal(oldKept.UID), "a new kept password")
		g.Expect(string(kept.Data[credv1.PasswordKey]) == oldPassword).To(BeFalse(), "a new platform password (values not printed)")
		g.Expect(kept.Labels).To(HaveKeyWithValue(testAccountKeys.ReleaseUID, string(again.UID)))
		var p corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: platformAcct.SecretName()}, &p)).To(Succeed())
		g.Expect(p.UID).NotTo(Equal(oldPlatform.UID), "a new platform account Secret")
		g.Expect(verifier.Matches(f, "postgres", oldPassword, string(p.Data[credv1.PasswordKey]))).To(BeFalse(),
			"the earlier platform password does not log in")
		g.Expect(verifier.Matches(f, "postgres", string(kept.Data[credv1.PasswordKey]), string(p.Data[credv1.PasswordKey]))).To(BeTrue(),
			"the new platform password does")
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	assertNoSecretMaterial(g, ns, minted, oldPassword)
}

// A deleted account's Secret and kept password are swept as soon as the
// deletion is seen; another account's records are left alone. (The
// valuesFrom entry going with the Secret is
// TestClickHouseAccountIsDeliveredThroughValuesFrom's.)
func TestDeletedAccountIsSweptAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	platformAcct := readyPlatformAccount(t, ns, "")
	other := newAccount(t, ns, "pg-app", "pg", "app", verifier.SCRAMSHA256)
	accountWith(g, ns, other.Name, accountReady)
	keptKey := client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(platformAcct)}
	var otherSecret corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: other.SecretName()}, &otherSecret)).To(Succeed())

	g.Expect(env.Client.Delete(ctx, platformAcct)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, keptKey, &corev1.Secret{})) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: platformAcct.SecretName()}, &corev1.Secret{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "the kept password and the account Secret are swept")
	var after corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&otherSecret), &after)).To(Succeed())
	g.Expect(after.UID).To(Equal(otherSecret.UID), "the other account's Secret stays")
	g.Expect(testenv.CounterValue(g, "credo_credential_records_swept_total",
		map[string]string{"namespace": ns, "reason": "AccountDeleted"})).To(BeNumerically(">=", 2))
}
