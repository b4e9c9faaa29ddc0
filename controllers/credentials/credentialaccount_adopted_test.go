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
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
)

// legacyRootAccount declares release db, the Secret db-credentials its
// chart rendered (root and a tenant's key, with Helm's ownership
// metadata), and the platform account root whose running MariaDB reads
// db-credentials[root] (spec.plaintext.secretRef).
func legacyRootAccount(t *testing.T, ns string) (*credv1.CredentialAccount, *helmv2.HelmRelease) {
	t.Helper()
	g := NewWithT(t)
	hr := env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	g.Expect(env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Namespace: ns,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": ns, "helm.sh/resource-policy": "keep"}},
		Data: map[string][]byte{"root": []byte("the-charts-root"), "app": []byte("the-tenants-app")},
	})).To(Succeed())
	acct := newAccount(t, ns, "db-root", "db", "root", verifier.Plain, func(a *credv1.CredentialAccount) {
		a.Spec.Owner = credv1.OwnerPlatform
		a.Spec.Plaintext = &credv1.PlaintextDelivery{Consumers: []credv1.ServiceAccountRef{mariadbOperator},
			SecretRef: &credv1.SecretKeyRef{Name: "db-credentials", Key: "root"}}
	})
	return acct, hr
}

func readSecret(g Gomega, ns, name string) *corev1.Secret {
	var s corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

// An existing MariaDB reads its root from the chart's db-credentials,
// and cannot be pointed elsewhere. Until the migration adopts that Secret
// the controller leaves its key alone (the consumer keeps the value it
// runs with) and says why; once adopted, the key holds the account's
// plaintext, follows every rotation, and is put back when someone else
// changes it. The Secret's other keys are never touched.
func TestAnAdoptedConsumerSecretHoldsTheAccountsPlaintext(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct, hr := legacyRootAccount(t, ns)

	a := accountWith(g, ns, "db-root", accountReason(credv1.DeliveryFailedCondition, credv1.PlaintextSecretNotAdoptedReason))
	g.Expect(conditions.IsReady(a)).To(BeFalse())
	g.Expect(readSecret(g, ns, "db-credentials").Data).To(HaveKeyWithValue("root", []byte("the-charts-root")), "not adopted: left as it is")

	w := &account.Writer{Client: env.Client, Keys: account.NewKeys(testAnnotationDomain), PlatformNamespace: testPlatformNamespace}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	_, err := w.Adopt(ctx, acct, hr, readSecret(g, ns, "db-credentials"), func(string) bool { return false })
	g.Expect(err).NotTo(HaveOccurred())
	// The adoption wakes nothing: the account is reconciled on request.
	requestAccountReconcile(g, ns, "db-root")
	accountWith(g, ns, "db-root", accountReady)

	password := func() string { return string(readSecret(g, ns, "db.root.account").Data[credv1.PasswordKey]) }
	first := password()
	legacy := readSecret(g, ns, "db-credentials")
	g.Expect(string(legacy.Data["root"]) == first).To(BeTrue(), "the consumer's key holds the account's plaintext")
	g.Expect(legacy.Data).To(HaveKeyWithValue("app", []byte("the-tenants-app")), "the other keys are left as they are")
	g.Expect(legacy.Labels).NotTo(HaveKey("app.kubernetes.io/managed-by"), "no Helm release takes it back")
	g.Expect(legacy.Annotations).NotTo(HaveKey("meta.helm.sh/release-name"))
	g.Expect(legacy.OwnerReferences).To(ContainElement(HaveField("UID", hr.UID)), "collected with the release")

	legacy.Data["root"] = []byte("someone-elses-root")
	g.Expect(env.Client.Update(ctx, legacy)).To(Succeed())
	requestAccountReconcile(g, ns, "db-root")
	g.Eventually(func() bool { return string(readSecret(g, ns, "db-credentials").Data["root"]) == first }, 30*time.Second, 100*time.Millisecond).
		Should(BeTrue(), "a change by someone else is put back")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	acct.Spec.Rotate = "once"
	g.Expect(env.Client.Update(ctx, acct)).To(Succeed())
	accountWith(g, ns, "db-root", func(a *credv1.CredentialAccount) bool { return accountReady(a) && a.Status.LastHandledRotate == "once" })
	second := password()
	g.Expect(second != first).To(BeTrue())
	g.Eventually(func() bool { return string(readSecret(g, ns, "db-credentials").Data["root"]) == second }, 30*time.Second, 100*time.Millisecond).
		Should(BeTrue(), "the rotation reaches the consumer's key")
	assertNoSecretMaterial(g, ns, first, second)
}

// A Secret named by spec.plaintext.secretRef that does not exist is not
// made: a chart may still render it. The reference may be added to an
// account that has none, and is then never changed or removed: the
// consumer's own reference does not change either.
func TestAMissingConsumerSecretIsNotMade(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	acct := newAccount(t, ns, "db-root", "db", "root", verifier.Plain, func(a *credv1.CredentialAccount) {
		a.Spec.Owner = credv1.OwnerPlatform
		a.Spec.Plaintext = &credv1.PlaintextDelivery{}
	})
	set := func(mutate func(*credv1.PlaintextDelivery)) error {
		cur := &credv1.CredentialAccount{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), cur)).To(Succeed())
		if cur.Spec.Plaintext == nil {
			cur.Spec.Plaintext = &credv1.PlaintextDelivery{}
		}
		mutate(cur.Spec.Plaintext)
		return env.Client.Update(ctx, cur)
	}
	g.Expect(set(func(p *credv1.PlaintextDelivery) {
		p.SecretRef = &credv1.SecretKeyRef{Name: "db-credentials", Key: "root"}
	})).To(Succeed())
	const setOnce = "plaintext.secretRef is set once and never changes"
	g.Expect(set(func(p *credv1.PlaintextDelivery) { p.SecretRef.Key = "admin" })).To(MatchError(ContainSubstring(setOnce)))
	g.Expect(set(func(p *credv1.PlaintextDelivery) { p.SecretRef = nil })).To(MatchError(ContainSubstring(setOnce)))
	a := accountWith(g, ns, "db-root", accountReason(credv1.DeliveryFailedCondition, credv1.PlaintextSecretNotFoundReason))
	g.Expect(conditions.GetMessage(a, credv1.DeliveryFailedCondition)).To(ContainSubstring("db-credentials"))
	g.Consistently(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, &corev1.Secret{})
	}, 2*time.Second, 200*time.Millisecond).ShouldNot(Succeed())
	cur := &credv1.CredentialAccount{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), cur)).To(Succeed())
	cur.Spec.Plaintext = nil
	g.Expect(env.Client.Update(ctx, cur)).To(MatchError(ContainSubstring(setOnce)), "nor dropped with spec.plaintext")
}

// The third tenant, who may write (not read) its namespace's Secrets:
// account Secrets are guarded by admission, so it reaches no plaintext
// there (TestPlatformPlaintextIsWrittenOnlyWhereNoTenantReadsIt), but no
// policy guards the chart's db-credentials. Whoever may update it puts a
// root password of their own where the MariaDB reads it: the account is
// Stalled with PlaintextExposed naming the write, and nothing is written.
func TestWhoMayWriteTheConsumersSecretExposesThePlaintext(t *testing.T) {
	for _, tc := range []struct {
		verbs []string
		found string
	}{
		{[]string{"update", "patch"}, "user:sam may update secrets/db-credentials"},
		// Deleting every Secret of the namespace, then creating one of the
		// name, replaces it as well.
		{[]string{"deletecollection", "create"}, "user:sam may deletecollection secrets"},
	} {
		t.Run(strings.Join(tc.verbs, ","), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.NewNamespace(t)
			g.Expect(env.Client.Create(ctx, &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: ns},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: tc.verbs}},
			})).To(Succeed())
			g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secret-writer"},
				Subjects:   []rbacv1.Subject{user("sam")},
			})).To(Succeed())
			legacyRootAccount(t, ns)
			a := accountWith(g, ns, "db-root", accountReason(credv1.SecretFailedCondition, credv1.PlaintextExposedReason))
			g.Expect(conditions.IsStalled(a)).To(BeTrue())
			g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring(tc.found))
			g.Expect(readSecret(g, ns, "db-credentials").Data).To(HaveKeyWithValue("root", []byte("the-charts-root")))
		})
	}
}

// A platform declares MariaDB's root for every release of the chart at
// once: an AccountSource's Static entry carries spec.plaintext, with the
// running MariaDBs' Secret named by {release}. Each derived account names
// its own release's Secret, and a template that asks for plaintext on a
// tenant account is refused by the API server.
func TestAnAccountSourceDeclaresEachReleasesPlaintextRoot(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	plaintext := &credv1.PlaintextTemplate{Consumers: []credv1.ServiceAccountRef{mariadbOperator},
		SecretRef: &credv1.SecretKeyRefTemplate{Name: "{release}-credentials", Key: "root"}}
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "maria-root-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": ns}},
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "root"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: verifier.Plain}, Owner: credv1.OwnerPlatform, Plaintext: plaintext}}},
		},
	}
	g.Expect(env.Client.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	for _, name := range []string{"db1", "db2"} {
		env.NewHelmRelease(t, ns, name, "mariadb", map[string]string{"app": ns})
		a := accountWith(g, ns, name+"-root", func(a *credv1.CredentialAccount) bool { return a.Spec.Plaintext != nil })
		g.Expect(a.Spec.Plaintext.SecretRef).To(Equal(&credv1.SecretKeyRef{Name: name + "-credentials", Key: "root"}))
		g.Expect(a.Spec.Plaintext.Consumers).To(Equal([]credv1.ServiceAccountRef{mariadbOperator}))
		accountWith(g, ns, name+"-root", accountReason(credv1.DeliveryFailedCondition, credv1.PlaintextSecretNotFoundReason))
	}

	bad := src.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Name: "tenant-plaintext-" + ns}
	bad.Spec.Sources[0].Template.Owner = credv1.OwnerTenant
	g.Expect(env.Client.Create(ctx, bad)).To(MatchError(ContainSubstring("plaintext is for a platform account of format plaintext")))
}
