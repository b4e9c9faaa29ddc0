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

package accessapi_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/credo-dev/credo/internal/account"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// The adversary of these tests is a tenant who may edit its own
// HelmRelease's values (as Flux's flux-edit role, aggregated into admin and
// edit, allows), declare CredentialAccounts and mint and revoke in its
// namespace. None of it may reach a platform account.

// newTenant returns a client of a new tenant user in ns who may edit
// HelmReleases and CredentialAccounts, mint, revoke and read the account view.
func newTenant(t *testing.T, ns string) client.Client {
	t.Helper()
	user := "tenant-" + rand.String(6)
	shippedRoles(t)
	grant(t, ns, user, helmv2.GroupVersion.Group, []string{"helmreleases"}, []string{"get", "list", "watch", "update", "patch"})
	grant(t, ns, user, credv1.GroupVersion.Group, []string{"credentialaccounts"}, []string{"get", "list", "watch", "create", "update", "patch", "delete"})
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"accounts"}, []string{"get", "list"})
	bindRole(t, ns, user, "ClusterRole", "credo-mint")
	bindRole(t, ns, user, "ClusterRole", "credo-revoke")
	c := userClient(t, user)
	waitAllowed(t, c, ns)
	return c
}

// keptPassword reads the platform's kept copy of a platform account's password.
func keptPassword(g Gomega, acct *credv1.CredentialAccount) *corev1.Secret {
	return secretOf(g, platformNamespace, account.KeptSecretName(acct))
}

func accountOf(g Gomega, ns, name string) *credv1.CredentialAccount {
	var a credv1.CredentialAccount
	g.Expect(platform.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &a)).To(Succeed())
	return &a
}

func setReleaseValues(g Gomega, c client.Client, ns, name, values string) {
	g.Eventually(func() error {
		var hr helmv2.HelmRelease
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &hr); err != nil {
			return err
		}
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
		return c.Update(context.Background(), &hr)
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// Issue 11, reproductions 1 to 3: a tenant adds the platform account's
// username to its values map, mints, and removes it again.
func TestTenantValuesKeyCannotTakeOverAPlatformAccount(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"takeover": ns}},
			Sources: []credv1.AccountSourceEntry{
				{Kind: credv1.SourceValuesMap, ValuesMap: &credv1.ValuesMapSource{Path: "users"},
					Template: credv1.AccountTemplate{Format: credv1.Format{Name: verifier.SCRAMSHA256}, Owner: credv1.OwnerTenant}},
				{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "postgres"},
					Template: credv1.AccountTemplate{Format: credv1.Format{Name: verifier.SCRAMSHA256}, Owner: credv1.OwnerPlatform}},
			},
		},
	}
	g.Expect(platform.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = platform.Delete(context.Background(), src) })
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: ns, Labels: map[string]string{"takeover": ns}},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "postgres", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"},
			}},
			Values: &apiextensionsv1.JSON{Raw: []byte(`{"users":{"app":{}}}`)},
		},
	}
	g.Expect(platform.Create(ctx, hr)).To(Succeed())

	secretName := credv1.AccountSecretName("main", "postgres")
	var stored []byte
	g.Eventually(func(g Gomega) {
		s := secretOf(g, ns, secretName)
		g.Expect(s.Annotations[keys.Origin]).To(Equal(string(credv1.OriginGenerated)))
		stored = s.Data[credv1.PasswordKey]
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	before := accountOf(g, ns, "main-postgres")
	g.Expect(before.Spec.Owner).To(Equal(credv1.OwnerPlatform))
	kept := keptPassword(g, before)
	g.Expect(verifier.Matches(mustFormat(g, verifier.SCRAMSHA256), "postgres", string(kept.Data[credv1.PasswordKey]), string(stored))).To(BeTrue(),
		"the platform keeps the password of the stored verifier")

	tenant := newTenant(t, ns)
	_, err := mintAccount(ctx, tenant, ns, "main-postgres", "", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a platform account is not the tenant's to mint: %v", err)

	// 1. The tenant adds the platform account's username to its values.
	setReleaseValues(g, tenant, ns, "main", `{"users":{"app":{},"postgres":{}}}`)
	g.Consistently(func(g Gomega) {
		g.Expect(accountOf(g, ns, "main-postgres").Spec.Owner).To(Equal(credv1.OwnerPlatform), "the owner is never changed")
		m, err := mintAccount(ctx, tenant, ns, "main-postgres", "", "")
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "minting main-postgres: %v", err)
		g.Expect(m.Status.Password).To(BeEmpty())
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())
	// The tenant's release is told; the cluster-scoped source only counts it.
	ev := env.ReleaseWarning(g, hr, credv1.UsernameRefusedReason)
	g.Expect(ev.Message).To(ContainSubstring(`username "postgres" (sources[0]) maps to Secret ` + secretName))
	g.Eventually(func(g Gomega) {
		var got credv1.AccountSource
		g.Expect(platform.Get(ctx, client.ObjectKeyFromObject(src), &got)).To(Succeed())
		g.Expect(conditions.IsReady(&got)).To(BeTrue())
		g.Expect(conditions.GetReason(&got, credv1.ReleasesNotAppliedCondition)).To(Equal(credv1.UsernameRefusedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	after := accountOf(g, ns, "main-postgres")
	g.Expect(after.UID).To(Equal(before.UID), "the platform account is the same object")
	g.Expect(after.Spec.Owner).To(Equal(credv1.OwnerPlatform), "its owner was not changed")
	var generated credv1.CredentialAccountList
	g.Expect(platform.List(ctx, &generated, client.InNamespace(ns), client.MatchingLabels{credv1.SourceLabel: src.Name})).To(Succeed())
	g.Expect(generated.Items).To(HaveLen(2), "app and the platform's postgres, no account for the tenant's key")

	// 2. Every account the tenant can name refuses to mint the platform's Secret.
	for _, a := range generated.Items {
		m, err := mintAccount(ctx, tenant, ns, a.Name, "", "")
		if a.Spec.Username == "postgres" {
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "minting %s: %v", a.Name, err)
			g.Expect(m.Status.Password).To(BeEmpty())
		}
	}
	g.Expect(secretOf(g, ns, secretName).Data[credv1.PasswordKey]).To(Equal(stored), "the platform's verifier is unchanged")

	// 3. The tenant removes the key again: the platform keeps its password.
	setReleaseValues(g, tenant, ns, "main", `{"users":{"app":{}}}`)
	g.Eventually(func(g Gomega) {
		var got credv1.AccountSource
		g.Expect(platform.Get(ctx, client.ObjectKeyFromObject(src), &got)).To(Succeed())
		g.Expect(conditions.IsReady(&got)).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		k := keptPassword(g, before)
		g.Expect(k.UID).To(Equal(kept.UID))
		g.Expect(bytes.Equal(k.Data[credv1.PasswordKey], kept.Data[credv1.PasswordKey])).To(BeTrue(), "the kept password is unchanged")
		g.Expect(secretOf(g, ns, secretName).Data[credv1.PasswordKey]).To(Equal(stored))
		g.Expect(accountOf(g, ns, "main-postgres").Spec.Owner).To(Equal(credv1.OwnerPlatform))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}

// Issue 11, reproduction 4: a tenant declares an account whose username
// maps to the Secret of a platform account (Root and root).
func TestCollidingTenantAccountCannotMintOrDeleteAPlatformAccount(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	platformAcct := accountOf(g, ns, "db")
	kept := keptPassword(g, platformAcct)
	tenant := newTenant(t, ns)

	impostor := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "db-root", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "db", Username: "Root", Format: credv1.Format{Name: verifier.SHA256Hex}},
	}
	g.Expect(tenant.Create(ctx, impostor)).To(Succeed())
	g.Eventually(func(g Gomega) {
		a := accountOf(g, ns, "db-root")
		g.Expect(conditions.GetReason(a, credv1.SecretFailedCondition)).To(Equal(credv1.AccountCollisionReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	m, err := mintAccount(ctx, tenant, ns, "db-root", "", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "minting the impostor: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("the Secret of a platform account (db)"))
	g.Expect(m.Status.Password).To(BeEmpty())
	_, err = revokeAccount(ctx, tenant, ns, "db-root")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "revoking the impostor: %v", err)
	g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(s.ResourceVersion), "the platform's Secret is unchanged")
	g.Expect(conditions.IsReady(accountOf(g, ns, "db"))).To(BeTrue(), "the platform account is untouched")

	g.Expect(tenant.Delete(ctx, impostor)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(platform.Get(ctx, client.ObjectKeyFromObject(impostor), &credv1.CredentialAccount{}))
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "the impostor is gone")
	// The sweep of what the impostor left runs on its deletion: it
	// deletes nothing of the platform account's, now or later.
	g.Consistently(func(g Gomega) {
		g.Expect(keptPassword(g, platformAcct).UID).To(Equal(kept.UID), "the platform's kept password was not deleted")
		g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(s.ResourceVersion), "the platform's Secret was not deleted")
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}

// The account view a tenant reads holds no platform account.
func TestPlatformAccountsAreAbsentFromTheAccountView(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	tenant := newTenant(t, ns)

	err := tenant.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch"}, &accessv1.Account{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	var list accessv1.AccountList
	g.Expect(tenant.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, a := range list.Items {
		names = append(names, a.Name)
	}
	g.Expect(names).To(ConsistOf("db"))
}

// A name no CredentialAccount can have is a 400, not a 500.
func TestPathLikeAccountNameIsABadRequest(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c, _ := newMinter(t, ns)
	for _, name := range []string{"a/b", "../x", "UPPER"} {
		_, err := mint(context.Background(), c, ns, name, "")
		g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "account %q: %v", name, err)
	}
}

// newPlatformPostgresSource creates an AccountSource whose one entry is the
// platform account postgres (suspended or not), and the HelmRelease main
// in ns it selects.
func newPlatformPostgresSource(t *testing.T, ns string, suspend bool) *credv1.AccountSource {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"platform-source": ns}},
			Suspend:         suspend,
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "postgres"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: verifier.SCRAMSHA256}, Owner: credv1.OwnerPlatform}}},
		},
	}
	g.Expect(platform.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = platform.Delete(context.Background(), src) })
	g.Expect(platform.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "main", Namespace: ns, Labels: map[string]string{"platform-source": ns}},
		Spec: helmv2.HelmReleaseSpec{Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart: "postgres", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"},
		}}},
	})).To(Succeed())
	return src
}

func mustFormat(g Gomega, name string) verifier.Format {
	f, err := verifier.Lookup(name)
	g.Expect(err).NotTo(HaveOccurred())
	return f
}

// platformVerifierRestored waits until the platform account's Secret holds
// the verifier of the kept password again, carries the account's UID, and
// the account is Ready.
func platformVerifierRestored(g Gomega, ns string, acct *credv1.CredentialAccount, format string) {
	g.Eventually(func(g Gomega) {
		kept := keptPassword(g, acct)
		s := secretOf(g, ns, acct.SecretName())
		g.Expect(verifier.Matches(mustFormat(g, format), acct.Spec.Username, string(kept.Data[credv1.PasswordKey]), string(s.Data[credv1.PasswordKey]))).
			To(BeTrue(), "the stored verifier is the kept password's (values not printed)")
		g.Expect(s.Annotations).To(HaveKeyWithValue(keys.AccountUID, string(acct.UID)))
		g.Expect(conditions.IsReady(accountOf(g, ns, acct.Name))).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// Whatever a tenant who may write its namespace's Secrets writes on the
// platform account's Secret (a forged account UID, a Secret of its own in
// place of credo's, the UID of an impostor account of its own), the
// platform account keeps it, it holds the platform's verifier again, and
// no tenant account mints it.
func TestTenantCannotTakeOverThePlatformSecretByRewritingIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	platformAcct := accountOf(g, ns, "db")
	tenant := newTenant(t, ns)
	user := "secret-editor-" + rand.String(6)
	grant(t, ns, user, "", []string{"secrets"}, []string{"get", "list", "create", "update", "patch", "delete"})
	editor := userClient(t, user)
	f := mustFormat(g, verifier.SHA256Hex)
	forged, err := f.Verifier("root", "the tenant's password")
	g.Expect(err).NotTo(HaveOccurred())
	rewrite := func(mutate func(*corev1.Secret)) {
		g.Eventually(func() error {
			var cur corev1.Secret
			if err := editor.Get(ctx, client.ObjectKeyFromObject(s), &cur); err != nil {
				return err
			}
			mutate(&cur)
			return editor.Update(ctx, &cur, client.FieldOwner("kubectl-edit"))
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	}

	// 1. Its own verifier under a forged account UID.
	rewrite(func(cur *corev1.Secret) {
		cur.Data[credv1.PasswordKey] = []byte(forged)
		cur.Annotations[keys.AccountUID] = "forged"
	})
	platformVerifierRestored(g, ns, platformAcct, verifier.SHA256Hex)

	// 2. A Secret of its own in place of credo's.
	g.Expect(editor.Delete(ctx, s)).To(Succeed())
	g.Expect(editor.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns},
		Type:       corev1.SecretTypeBasicAuth,
		Data:       map[string][]byte{credv1.UsernameKey: []byte("root"), credv1.PasswordKey: []byte(forged)},
	}, client.FieldOwner("tenant"))).To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)))
	platformVerifierRestored(g, ns, platformAcct, verifier.SHA256Hex)

	// 3. The UID of an impostor account of its own, which it then mints.
	impostor := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "db-root", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "db", Username: "Root", Format: credv1.Format{Name: verifier.SHA256Hex}},
	}
	g.Expect(tenant.Create(ctx, impostor)).To(Succeed())
	rewrite(func(cur *corev1.Secret) { cur.Annotations[keys.AccountUID] = string(impostor.UID) })
	g.Consistently(func(g Gomega) {
		m, err := mintAccount(ctx, tenant, ns, "db-root", "", "")
		g.Expect(apierrors.IsForbidden(err) || apierrors.IsConflict(err)).To(BeTrue(), "minting the impostor: %v", err)
		g.Expect(m.Status.Password).To(BeEmpty())
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	platformVerifierRestored(g, ns, platformAcct, verifier.SHA256Hex)
	g.Expect(conditions.GetReason(accountOf(g, ns, "db-root"), credv1.SecretFailedCondition)).To(Equal(credv1.AccountCollisionReason))
}

// A tenant who declares an account at the name of a platform account an
// AccountSource derives, before the source has created it (here the source
// is suspended), neither holds nor mints its Secret.
func TestTenantCannotPreClaimAReservedPlatformUsername(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	src := newPlatformPostgresSource(t, ns, true)
	tenant := newTenant(t, ns)
	g.Expect(tenant.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "main-postgres", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "main", Username: "postgres", Format: credv1.Format{Name: verifier.SCRAMSHA256}},
	})).To(Succeed())

	g.Eventually(func(g Gomega) {
		a := accountOf(g, ns, "main-postgres")
		g.Expect(conditions.GetReason(a, credv1.SecretFailedCondition)).To(Equal(credv1.AccountCollisionReason))
		g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring("reserved for the platform account"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	m, err := mintAccount(ctx, tenant, ns, "main-postgres", "", "")
	g.Expect(apierrors.IsConflict(err) || apierrors.IsForbidden(err)).To(BeTrue(), "minting a reserved name: %v", err)
	g.Expect(m.Status.Password).To(BeEmpty())
	err = platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName("main", "postgres")}, &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Secret was written at the reserved name: %v", err)

	// Without the reservation, the account is the tenant's.
	g.Expect(platform.Delete(ctx, src)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsReady(accountOf(g, ns, "main-postgres"))).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// A Secret no update can repair (made immutable with the tenant's verifier,
// or planted with another type and a finalizer) is replaced.
func TestTenantCannotFreezeAForgedPlatformVerifier(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	platformAcct := accountOf(g, ns, "db")
	user := "secret-editor-" + rand.String(6)
	grant(t, ns, user, "", []string{"secrets"}, []string{"get", "list", "create", "update", "patch", "delete"})
	editor := userClient(t, user)
	forged, err := mustFormat(g, verifier.SHA256Hex).Verifier("root", "the tenant's password")
	g.Expect(err).NotTo(HaveOccurred())

	// 1. Its verifier, frozen: an immutable Secret's data cannot be updated.
	g.Eventually(func() error {
		var cur corev1.Secret
		if err := editor.Get(ctx, client.ObjectKeyFromObject(s), &cur); err != nil {
			return err
		}
		cur.Data[credv1.PasswordKey] = []byte(forged)
		cur.Immutable = ptr.To(true)
		return editor.Update(ctx, &cur, client.FieldOwner("kubectl-edit"))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	platformVerifierRestored(g, ns, platformAcct, verifier.SHA256Hex)
	g.Expect(secretOf(g, ns, s.Name).Immutable).To(BeNil(), "the frozen Secret was replaced")

	// 2. An Opaque Secret of its own, held by a finalizer.
	g.Expect(editor.Delete(ctx, s)).To(Succeed())
	planted := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns, Finalizers: []string{"tenant.example/hold"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{credv1.UsernameKey: []byte("root"), credv1.PasswordKey: []byte(forged)},
	}
	g.Expect(editor.Create(ctx, planted, client.FieldOwner("tenant"))).To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)))
	platformVerifierRestored(g, ns, platformAcct, verifier.SHA256Hex)
	g.Expect(secretOf(g, ns, s.Name).Type).To(Equal(corev1.SecretTypeBasicAuth))
}

// A tenant who declares an account at the object name of a platform
// account the AccountSource would create (any username) does not keep the
// platform from its account: the platform account takes a name of its own.
func TestTenantCannotSquatAPlatformAccountName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := newTenant(t, ns)
	g.Expect(tenant.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "main-postgres", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "main", Username: "squatter", Format: credv1.Format{Name: verifier.SCRAMSHA256}},
	})).To(Succeed())
	src := newPlatformPostgresSource(t, ns, false)

	g.Eventually(func(g Gomega) {
		var list credv1.CredentialAccountList
		g.Expect(platform.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{credv1.SourceLabel: src.Name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		a := list.Items[0]
		g.Expect(a.Spec.Owner).To(Equal(credv1.OwnerPlatform))
		g.Expect(a.Spec.Username).To(Equal("postgres"))
		g.Expect(conditions.IsReady(&a)).To(BeTrue())
		s := secretOf(g, ns, credv1.AccountSecretName("main", "postgres"))
		g.Expect(s.Annotations).To(HaveKeyWithValue(keys.AccountUID, string(a.UID)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		var got credv1.AccountSource
		g.Expect(platform.Get(ctx, client.ObjectKeyFromObject(src), &got)).To(Succeed())
		g.Expect(conditions.IsReady(&got)).To(BeTrue())
		g.Expect(got.Status.Accounts).To(Equal(int32(1)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}
