//go:build engines

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

package engines

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

// TestPlatformRootRotationIsTheOneMariaDBTakes runs credo as `make dev` does
// and a real MariaDB from Debian's packages, driven the way mariadb-operator
// drives it: as the operator's ServiceAccount (which may read every
// Secret, as the operator's ClusterRole grants), reading the root password
// from the account Secret by its key (rootPasswordSecretKeyRef:
// {name: <release>.root.account, key: password}), initialising root with
// it, and applying the value again when the watched Secret changes. The
// account is a platform account of format plaintext that names the
// operator as its consumer, in a namespace where no tenant is bound (the
// platform's apps API tenant). A rotation (spec.rotate) writes a new root
// password; the server then takes it and refuses the old one, and the kept
// copy in the platform namespace is the same value.
func TestPlatformRootRotationIsTheOneMariaDBTakes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := devenv.Start(ctx, devenv.Options{Samples: "-"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Client

	op, operator := mariadbOperator(t, env)

	ns := "engines-root"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	markReady(t, c, helmRelease(t, c, ns, "maria", "mariadb", false), nil)
	g.Expect(c.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "maria-root", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: "maria", Username: "root", Owner: credv1.OwnerPlatform,
			Format:       credv1.Format{Name: verifier.Plain},
			Plaintext:    &credv1.PlaintextDelivery{Consumers: []credv1.ServiceAccountRef{op}},
			SecretLabels: map[string]string{"k8s.mariadb.com/watch": ""}},
	})).To(Succeed())
	waitReady(t, c, ns)

	sec := &secrets{}
	// rootPassword reads the root password as the operator does: the key
	// password of the Secret the MariaDB's rootPasswordSecretKeyRef names.
	rootPassword := func(g Gomega) (string, string) {
		var s corev1.Secret
		g.Expect(operator.Get(ctx, client.ObjectKey{Namespace: ns, Name: "maria.root.account"}, &s)).To(Succeed())
		p := string(s.Data[credv1.PasswordKey])
		g.Expect(len(p)).To(BeNumerically(">=", 32))
		sec.add(p)
		return p, s.ResourceVersion
	}
	first, version := rootPassword(g)

	m := startMariaDB(t, sec)
	// Datadir initialisation, as MARIADB_ROOT_PASSWORD from the Secret's key.
	m.mustAdmin(t, "initialise root", fmt.Sprintf("DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';\n"+
		"CREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n", first))
	g.Expect(m.login("root", first).ok()).To(BeTrue(), "root logs in with the password credo generated")

	var acct credv1.CredentialAccount
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "maria-root"}, &acct)).To(Succeed())
	acct.Spec.Rotate = "2026-12-07"
	g.Expect(c.Update(ctx, &acct)).To(Succeed())

	// The operator sees the watched Secret change and applies the new value.
	var second string
	g.Eventually(func(g Gomega) {
		var v string
		second, v = rootPassword(g)
		g.Expect(v).NotTo(Equal(version))
		g.Expect(second).NotTo(Equal(first))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	m.mustAdmin(t, "apply the rotated root password", fmt.Sprintf("ALTER USER 'root'@'%%' IDENTIFIED BY '%s';\n", second))

	g.Expect(m.login("root", second).ok()).To(BeTrue(), "root logs in with the rotated password")
	g.Expect(m.login("root", first).ok()).To(BeFalse(), "the password before the rotation is refused")
	var kept corev1.Secret
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: ns + ".maria.root.account"}, &kept)).To(Succeed())
	g.Expect(string(kept.Data[credv1.PasswordKey]) == second).To(BeTrue(), "the kept copy is the value the server took")
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "maria-root"}, &acct)).To(Succeed())
		g.Expect(acct.Status.LastHandledRotate).To(Equal("2026-12-07"))
		g.Expect(acct.Status.History).To(HaveLen(2))
		g.Expect(acct.Status.History[0].Operation).To(Equal(credv1.OriginGenerated))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}

// mariadbOperator gives mariadb-operator's identity (its ServiceAccount)
// what the operator's ClusterRole grants on Secrets, read cluster-wide,
// and returns it and a client acting as it.
func mariadbOperator(t *testing.T, env *devenv.Environment) (credv1.ServiceAccountRef, client.Client) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	op := credv1.ServiceAccountRef{Namespace: "mariadb-operator", Name: "mariadb-operator"}
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "mariadb-operator-secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mariadb-operator-secrets"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "mariadb-operator-secrets"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: op.Namespace, Name: op.Name}}})).To(Succeed())
	user, groups := controlplane.ServiceAccountUser(op.Namespace, op.Name)
	operator, err := env.UserClient(user, groups)
	g.Expect(err).NotTo(HaveOccurred())
	return op, operator
}
