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

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// mariadbOperator is the consumer the accounts of these tests name.
var mariadbOperator = credv1.ServiceAccountRef{Namespace: "mariadb-operator", Name: "mariadb-operator"}

// rootAccount declares release db and its platform account root of format
// plaintext, delivered to mariadb-operator.
func rootAccount(t *testing.T, ns string, consumers ...credv1.ServiceAccountRef) *credv1.CredentialAccount {
	t.Helper()
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	return newAccount(t, ns, "db-root", "db", "root", verifier.Plain, func(a *credv1.CredentialAccount) {
		a.Spec.Owner = credv1.OwnerPlatform
		a.Spec.Plaintext = &credv1.PlaintextDelivery{Consumers: consumers}
	})
}

// bindRole binds the ClusterRole role to subject in ns.
func bindRole(t *testing.T, ns, role string, subject rbacv1.Subject) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: role + "-", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	})).To(Succeed())
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

// mayRead asks kube-apiserver whether user may read the Secret name of ns.
func mayRead(g Gomega, user, ns, name string) bool {
	ok, err := env.Allowed(context.Background(), user, []string{"system:authenticated"},
		authzv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: name})
	g.Expect(err).NotTo(HaveOccurred())
	return ok
}

// Seed 002: "plaintext where the consumer needs it, in a Secret the tenant
// is never granted". A platform account of format plaintext (MariaDB's
// root, which mariadb-operator reads by key) is written where no tenant
// may read it, and only there; the three tenants:
//   - one who uses only the platform's apps API holds no binding in its
//     namespace: the plaintext is written (32 characters or more), kept in
//     the platform namespace, and the tenant may not read it;
//   - one bound to the built-in admin, edit and view reads every Secret of
//     its namespace: the account is Stalled with PlaintextExposed naming
//     it, and nothing is written, kept copy included;
//   - one who may write (not read) the namespace's Secrets reads nothing:
//     the plaintext is written.
func TestPlatformPlaintextIsWrittenOnlyWhereNoTenantReadsIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	apps := env.NewNamespace(t)
	rootAccount(t, apps, mariadbOperator)
	a := accountWith(g, apps, "db-root", accountReady)
	g.Expect(a.Status.Origin).To(Equal(credv1.OriginGenerated))
	var copySecret, kept corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: apps, Name: "db.root.account"}, &copySecret)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: testPlatformNamespace, Name: apps + ".db.root.account"}, &kept)).To(Succeed())
	password := string(copySecret.Data["password"])
	g.Expect(len(password)).To(BeNumerically(">=", 32), "a generated password of 32 characters or more")
	g.Expect(password == string(kept.Data["password"])).To(BeTrue(), "the copy is the kept plaintext itself")
	g.Expect(mayRead(g, "apps-tenant", apps, "db.root.account")).To(BeFalse())

	admins := env.NewNamespace(t)
	for _, role := range []string{"admin", "edit", "view"} {
		bindRole(t, admins, role, user("ada"))
	}
	rootAccount(t, admins, mariadbOperator)
	a = accountWith(g, admins, "db-root", accountReason(credv1.SecretFailedCondition, credv1.PlaintextExposedReason))
	g.Expect(conditions.IsStalled(a)).To(BeTrue())
	g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring("user:ada may get secrets"))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: admins, Name: "db.root.account"}, &corev1.Secret{}))).
		To(BeTrue(), "no copy where namespace admins read Secrets")
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: testPlatformNamespace, Name: admins + ".db.root.account"}, &corev1.Secret{}))).
		To(BeTrue(), "nothing kept either")

	writers := env.NewNamespace(t)
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: writers},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update", "patch", "delete"}}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "secret-writer", Namespace: writers},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secret-writer"},
		Subjects:   []rbacv1.Subject{user("sam")},
	})).To(Succeed())
	rootAccount(t, writers, mariadbOperator)
	accountWith(g, writers, "db-root", accountReady)
	g.Expect(mayRead(g, "sam", writers, "db.root.account")).To(BeFalse())
	assertNoSecretMaterial(g, apps, password)
}

// An exposure found after the plaintext was written stops the next
// rotation: the copy keeps the password it holds (nothing is lost, and
// nothing new reaches the subject), and the rotation happens once the
// access is gone.
func TestAPlaintextRotationWaitsWhileItWouldBeExposed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	acct := rootAccount(t, ns, mariadbOperator)
	accountWith(g, ns, "db-root", accountReady)
	read := func() string {
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db.root.account"}, &s)).To(Succeed())
		return string(s.Data["password"])
	}
	first := read()

	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mallory-edit", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{user("mallory")},
	}
	g.Expect(env.Client.Create(ctx, rb)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	acct.Spec.Rotate = "after-mallory"
	g.Expect(env.Client.Update(ctx, acct)).To(Succeed())
	a := accountWith(g, ns, "db-root", accountReason(credv1.SecretFailedCondition, credv1.PlaintextExposedReason))
	g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring("user:mallory"))
	g.Expect(read() == first).To(BeTrue(), "the exposed copy keeps its password")

	g.Expect(env.Client.Delete(ctx, rb)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	acct.Spec.Rotate = "after-mallory-left"
	g.Expect(env.Client.Update(ctx, acct)).To(Succeed())
	accountWith(g, ns, "db-root", func(a *credv1.CredentialAccount) bool {
		return accountReady(a) && a.Status.LastHandledRotate == "after-mallory-left"
	})
	g.Expect(read() != first).To(BeTrue(), "rotated once the access is gone")
}

// The consumer the account names may read every Secret (mariadb-operator
// watches them cluster-wide) without that counting as exposure; the same
// access held by a ServiceAccount the account does not name is one.
func TestOnlyTheNamedConsumerMayReadThePlaintext(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "secret-reader-"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}},
	}
	g.Expect(env.Client.Create(ctx, reader)).To(Succeed())
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "mariadb-operator-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: mariadbOperator.Namespace, Name: mariadbOperator.Name}},
	}
	g.Expect(env.Client.Create(ctx, crb)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, crb); _ = env.Client.Delete(ctx, reader) })

	named := env.NewNamespace(t)
	rootAccount(t, named, mariadbOperator)
	accountWith(g, named, "db-root", accountReady)

	unnamed := env.NewNamespace(t)
	rootAccount(t, unnamed, credv1.ServiceAccountRef{Namespace: "backup", Name: "cron"})
	a := accountWith(g, unnamed, "db-root", accountReason(credv1.SecretFailedCondition, credv1.PlaintextExposedReason))
	msg := conditions.GetMessage(a, credv1.SecretFailedCondition)
	g.Expect(msg).To(ContainSubstring("serviceaccount:mariadb-operator:mariadb-operator may get secrets"))
	g.Expect(strings.Contains(msg, crb.Name)).To(BeTrue(), "the message names the binding")
}

// A platform account of format plaintext must say that its consumer needs
// the plaintext (spec.plaintext); without it, it is refused as before.
func TestPlatformPlaintextWithoutItsDeliveryIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	newAccount(t, ns, "db-root", "db", "root", verifier.Plain, func(a *credv1.CredentialAccount) { a.Spec.Owner = credv1.OwnerPlatform })
	accountWith(g, ns, "db-root", accountReason(credv1.FormatRefusedCondition, credv1.PlatformPlaintextReason))
	err := env.Client.Create(context.Background(), &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-plain", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: credv1.Format{Name: verifier.Plain},
			Plaintext: &credv1.PlaintextDelivery{}},
	})
	g.Expect(err).To(MatchError(ContainSubstring("plaintext is for a platform account of format plaintext")))
}
