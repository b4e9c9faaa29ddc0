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

	"github.com/credo-dev/credo/internal/account"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// secretWriter returns a client of user, allowed to read and update the
// Secrets of ns and nothing else.
func secretWriter(t *testing.T, ns, user string) client.Client {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update", "patch"}}},
	}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	cfg, err := env.UserConfig(user, nil)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// readyPlatformAccount declares the release pg and its platform account
// postgres (scram-sha-256, with spec.rotate when given) and returns it once
// Ready.
func readyPlatformAccount(t *testing.T, ns, rotate string) *credv1.CredentialAccount {
	t.Helper()
	g := NewWithT(t)
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	acct := newAccount(t, ns, "pg-postgres", "pg", "postgres", verifier.SCRAMSHA256, func(a *credv1.CredentialAccount) {
		a.Spec.Owner, a.Spec.Rotate = credv1.OwnerPlatform, rotate
	})
	accountWith(g, ns, acct.Name, accountReady)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	return acct
}

// A platform account's stored verifier that someone else rewrote is found
// on the next reconcile, repaired from the kept password, and reported.
func TestTamperedPlatformVerifierIsRepairedFromTheKeptPassword(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := readyPlatformAccount(t, ns, "")
	f, err := verifier.Lookup(verifier.SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(acct)}, &kept)).To(Succeed())
	password := string(kept.Data[credv1.PasswordKey])

	// An intruder who may write the tenant's Secrets stores the verifier of
	// a password of its own.
	intruder := secretWriter(t, ns, "intruder")
	forged, err := f.Verifier("postgres", "the intruder's password")
	g.Expect(err).NotTo(HaveOccurred())
	before := testenv.CounterValue(g, "credo_credential_verifiers_tampered_total", map[string]string{"namespace": ns})
	g.Eventually(func() error {
		var s corev1.Secret
		if err := intruder.Get(ctx, client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName("pg", "postgres")}, &s); err != nil {
			return err
		}
		s.Data[credv1.PasswordKey] = []byte(forged)
		return intruder.Update(ctx, &s, client.FieldOwner("intruder-edit"))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName("pg", "postgres")}, &s)).To(Succeed())
		g.Expect(verifier.Matches(f, "postgres", password, string(s.Data[credv1.PasswordKey]))).To(BeTrue(),
			"the stored verifier is the kept password's again (values not printed)")
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	e := env.WarningEvent(g, ns, credv1.CredentialAccountKind, acct.Name, credv1.VerifierTamperedReason)
	g.Expect(e.Message).To(ContainSubstring(`"intruder-edit"`), "the event names the last writer")
	g.Expect(strings.Contains(e.Message, password)).To(BeFalse(), "the event holds no password (not printed)")
	g.Expect(e.Message).NotTo(ContainSubstring(forged))
	g.Expect(testenv.CounterValue(g, "credo_credential_verifiers_tampered_total", map[string]string{"namespace": ns})).To(Equal(before + 1))
	g.Expect(strings.Contains(env.Logs.String(), password)).To(BeFalse(), "no log line holds the password (not printed)")
	g.Expect(kept.Annotations).To(HaveKeyWithValue(testAccountKeys.AccountUID, string(acct.UID)), "the kept password carries the account's UID")
}

// Of two accounts mapping to one Secret, the one that holds it keeps it;
// the other is refused and deletes nothing of it.
func TestOfTwoUsernamesMappingToOneSecretTheHolderKeepsIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	one := newAccount(t, ns, "one", "db", "App_User", "mysql-native")
	accountWith(g, ns, "one", accountReady)
	two := newAccount(t, ns, "two", "db", "app.user", "mysql-native")

	accountWith(g, ns, "two", accountReason(credv1.SecretFailedCondition, credv1.AccountCollisionReason))
	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName("db", "app.user")}, &s)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(one), one)).To(Succeed())
	g.Expect(s.Annotations).To(HaveKeyWithValue(testAccountKeys.AccountUID, string(one.UID)))
	g.Expect(string(s.Data[credv1.UsernameKey])).To(Equal("App_User"))
	g.Expect(accountWith(g, ns, "one", accountReady)).NotTo(BeNil(), "the holder stays Ready")

	g.Expect(env.Client.Delete(ctx, two)).To(Succeed())
	g.Eventually(func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(two), two)
		return err != nil && strings.Contains(err.Error(), "not found")
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue())
	var after corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&s), &after)).To(Succeed(), "the holder's Secret was not deleted")
	g.Expect(after.UID).To(Equal(s.UID))
}

// A platform account's Secret deleted by someone else comes back with the
// kept password, without a rotation (even with spec.rotate set); one being
// deleted while it holds the kept password's verifier is awaited, not
// reclaimed.
func TestDeletedPlatformSecretComesBackWithTheKeptPassword(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := readyPlatformAccount(t, ns, "2026-12-01")
	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: testPlatformNamespace, Name: account.KeptSecretName(acct)}, &kept)).To(Succeed())
	password := string(kept.Data[credv1.PasswordKey])
	f, err := verifier.Lookup(verifier.SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	key := client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName("pg", "postgres")}

	// Held by a finalizer while it is deleted: awaited.
	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, key, &s)).To(Succeed())
	s.Finalizers = append(s.Finalizers, "example.org/hold")
	g.Expect(env.Client.Update(ctx, &s)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &s)).To(Succeed())
	accountWith(g, ns, acct.Name, accountReason(credv1.SecretFailedCondition, credv1.SecretDeletingReason))
	g.Expect(env.Client.Get(ctx, key, &s)).To(Succeed())
	s.Finalizers = nil
	g.Expect(env.Client.Update(ctx, &s)).To(Succeed())

	g.Eventually(func(g Gomega) {
		var back corev1.Secret
		g.Expect(env.Client.Get(ctx, key, &back)).To(Succeed())
		g.Expect(back.UID).NotTo(Equal(s.UID))
		g.Expect(verifier.Matches(f, "postgres", password, string(back.Data[credv1.PasswordKey]))).To(BeTrue(), "the kept password's verifier (values not printed)")
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	accountWith(g, ns, acct.Name, accountReady)
	g.Consistently(func(g Gomega) {
		var k corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&kept), &k)).To(Succeed())
		g.Expect(string(k.Data[credv1.PasswordKey]) == password).To(BeTrue(), "no rotation (values not printed)")
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	var list corev1.EventList
	g.Expect(env.Client.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	for _, e := range list.Items {
		g.Expect(e.Reason).NotTo(BeElementOf(credv1.SecretReclaimedReason, credv1.VerifierTamperedReason), "no tamper signal for a deletion")
	}
}
