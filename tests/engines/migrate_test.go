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
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/migrate"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

var migrationKeys = account.NewKeys("credentials.cozystack.io")

// chartRelease is a release whose chart rendered <release>-credentials:
// three tenant users and a platform root, in the engine's format.
type chartRelease struct {
	name, format string
	// plainRoot makes the root a platform account of format plaintext
	// (MariaDB's root, which mariadb-operator reads by key).
	plainRoot bool
	// passwords are the chart's plaintexts, by username.
	passwords map[string]string
}

func (r chartRelease) tenants() []string {
	return []string{r.name + "_alice", r.name + "_bob", r.name + "_carol"}
}
func (r chartRelease) root() string { return r.name + "_root" }

// TestMigrateChartCredentials runs credo as `make dev` does, with no
// helm-controller (the test writes the releases' Ready status itself), and
// `kubectl credo migrate` in process through the command's own entry
// (migrate.Command, as cmd/kubectl-credo calls it), as the ServiceAccount
// of config/samples/migration with that sample's RBAC. The migrated
// verifiers are then stored in real PostgreSQL, MariaDB and ClickHouse.
func TestMigrateChartCredentials(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := devenv.Start(ctx, devenv.Options{Samples: "-", Flux: []string{controlplane.NotificationController}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Client

	runAs, user := migrationCommand(t, env)

	ns := "engines-migrate"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	sec := &secrets{}
	releases := []chartRelease{{name: "pgdb", format: "scram-sha-256"}, {name: "maria", format: "mysql-native", plainRoot: true}, {name: "ch", format: "sha256-hex"}}
	for i := range releases {
		r := &releases[i]
		r.passwords = map[string]string{}
		for _, u := range append(r.tenants(), r.root()) {
			p, err := account.GeneratePassword()
			g.Expect(err).NotTo(HaveOccurred())
			r.passwords[u] = p
			sec.add(p)
		}
		chart(t, c, ns, r.name, false, r.passwords)
		for _, u := range r.tenants() {
			declare(t, c, ns, r.name, u, r.format, credv1.OwnerTenant)
		}
		if r.plainRoot {
			declarePlaintextRoot(t, c, ns, *r)
		} else {
			declare(t, c, ns, r.name, r.root(), r.format, credv1.OwnerPlatform)
		}
	}
	// Two releases the migration skips: one suspended, one whose
	// <release>-credentials lacks a declared tenant user's key.
	chart(t, c, ns, "held", true, map[string]string{"held_user": "held-password-0123456789"})
	declare(t, c, ns, "held", "held_user", "sha256-hex", credv1.OwnerTenant)
	chart(t, c, ns, "gap", false, map[string]string{"gap_other": "gap-password-0123456789"})
	declare(t, c, ns, "gap", "gap_user", "sha256-hex", credv1.OwnerTenant)
	sec.add("held-password-0123456789", "gap-password-0123456789")
	waitReady(t, c, ns)

	run := func(args ...string) (string, error) { return runAs(sec, append([]string{"-n", ns}, args...)...) }
	report := func() map[string]string {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: migrate.DefaultReportConfigMap}, &cm); err != nil {
			return nil
		}
		return cm.Data
	}

	// A dry run writes nothing.
	settle(t, c, ns)
	before := versions(t, c, ns)
	text, err := run()
	g.Expect(exitCode(t, err)).To(Equal(migrate.ExitSkipped))
	g.Expect(text).To(And(ContainSubstring("Dry run"), ContainSubstring("pgdb_alice"), ContainSubstring("rotate")))
	g.Expect(err.Error()).To(HavePrefix("dry run: 2 release(s) would be skipped"), "a dry run says it listed nothing")
	g.Expect(versions(t, c, ns)).To(Equal(before), "a dry run writes no Secret")
	g.Expect(report()).To(BeNil(), "a dry run writes no ConfigMap")

	// The migration.
	_, err = run("--apply")
	g.Expect(exitCode(t, err)).To(Equal(migrate.ExitSkipped), "skipped releases are listed")
	g.Expect(report()).To(And(HaveLen(2),
		HaveKeyWithValue(ns+".held", HavePrefix(migrate.SuspendedReason+":")),
		HaveKeyWithValue(ns+".gap", HavePrefix(migrate.KeyMissingReason+":"))))
	stored := map[string]string{}
	kept := map[string]string{}
	for _, r := range releases {
		for _, u := range r.tenants() {
			s := accountSecret(t, c, ns, r.name, u)
			g.Expect(s.Annotations).To(And(HaveKeyWithValue(migrationKeys.Origin, "Migrated"), HaveKey(migrationKeys.PreviouslyExposed())), u)
			g.Expect(account.ParseHistory(s.Annotations[migrationKeys.History])).To(ContainElement(HaveField("By", user)), u)
			stored[u] = string(s.Data[credv1.PasswordKey])
		}
		s := accountSecret(t, c, ns, r.name, r.root())
		g.Expect(s.Annotations).To(And(HaveKeyWithValue(migrationKeys.Origin, "Generated"), HaveKey(migrationKeys.MigratedRotation())), r.root())
		g.Expect(s.Annotations).NotTo(HaveKey(migrationKeys.PreviouslyExposed()))
		stored[r.root()] = string(s.Data[credv1.PasswordKey])
		var k corev1.Secret
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: ns + "." + s.Name}, &k)).To(Succeed())
		kept[r.root()] = string(k.Data[credv1.PasswordKey])
		g.Expect(kept[r.root()] == r.passwords[r.root()]).To(BeFalse(), "%s: the exposed platform password was rotated", r.root())
		if r.plainRoot {
			g.Expect(stored[r.root()] == kept[r.root()]).To(BeTrue(), "%s: the platform plaintext is the kept password itself", r.root())
		}
	}
	for _, v := range stored {
		sec.add(v)
	}
	for _, v := range kept {
		sec.add(v)
	}
	g.Expect(accountSecret(t, c, ns, "held", "held_user").Annotations[migrationKeys.Origin]).To(Equal("NotIssued"), "a skipped release is written nothing")

	// Re-running changes nothing.
	settle(t, c, ns)
	before = versions(t, c, ns)
	_, err = run("--apply")
	g.Expect(exitCode(t, err)).To(Equal(migrate.ExitSkipped))
	g.Expect(versions(t, c, ns)).To(Equal(before), "a re-run writes nothing")

	// Once the skipped releases are fit, a re-run migrates them, empties
	// the list and exits 0.
	var held helmv2.HelmRelease
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held"}, &held)).To(Succeed())
	held.Spec.Suspend = false
	g.Expect(c.Update(ctx, &held)).To(Succeed())
	markReady(t, c, &held, nil)
	var gap corev1.Secret
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gap-credentials"}, &gap)).To(Succeed())
	gap.Data["gap_user"] = []byte("gap-password-0123456789")
	g.Expect(c.Update(ctx, &gap)).To(Succeed())
	_, err = run("--apply")
	g.Expect(exitCode(t, err)).To(Equal(0))
	g.Expect(report()).To(BeEmpty())

	// A mint clears the previously-exposed mark.
	alice := acctName("pgdb", "pgdb_alice")
	m := &accessv1.Mint{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: accessv1.AccountRequestSpec{Account: alice}}
	g.Expect(c.Create(ctx, m)).To(Succeed(), "mint %s through kube-apiserver", alice)
	sec.add(m.Status.Password)
	minted := accountSecret(t, c, ns, "pgdb", "pgdb_alice")
	g.Expect(minted.Annotations).To(And(HaveKeyWithValue(migrationKeys.Origin, "Minted"), Not(HaveKey(migrationKeys.PreviouslyExposed()))))

	loginsAfterMigration(t, sec, releases, stored, kept)
}

// loginsAfterMigration stores the migrated verifiers in each engine: the
// tenant users log in with the chart's (old) passwords; the root's old
// password no longer does, its new kept one does.
func loginsAfterMigration(t *testing.T, sec *secrets, releases []chartRelease, stored, kept map[string]string) {
	byName := map[string]chartRelease{}
	for _, r := range releases {
		byName[r.name] = r
	}
	check := func(t *testing.T, r chartRelease, login func(user, password string) result) {
		g := NewWithT(t)
		for _, u := range r.tenants() {
			g.Expect(login(u, r.passwords[u]).ok()).To(BeTrue(), "%s logs in with the chart's password", u)
			g.Expect(login(u, r.passwords[u]+"x").ok()).To(BeFalse(), "%s: a wrong one does not", u)
		}
		g.Expect(login(r.root(), r.passwords[r.root()]).ok()).To(BeFalse(), "%s: the exposed password no longer logs in", r.root())
		g.Expect(login(r.root(), kept[r.root()]).ok()).To(BeTrue(), "%s: the rotated password logs in", r.root())
	}
	t.Run("postgresql", func(t *testing.T) {
		r := byName["pgdb"]
		p := startPostgres(t, sec)
		var script strings.Builder
		for _, u := range append(r.tenants(), r.root()) {
			fmt.Fprintf(&script, "CREATE ROLE %s LOGIN;\nALTER ROLE %s PASSWORD '%s';\n", u, u, stored[u])
		}
		p.mustPSQL(t, "store the migrated verifiers", script.String())
		check(t, r, p.login)
	})
	t.Run("mariadb", func(t *testing.T) {
		r := byName["maria"]
		m := startMariaDB(t, sec)
		var script strings.Builder
		for _, u := range r.tenants() {
			fmt.Fprintf(&script, "CREATE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s';\n", u, stored[u])
		}
		// The root's Secret holds the plaintext, which the server takes
		// as mariadb-operator gives it (MARIADB_ROOT_PASSWORD).
		fmt.Fprintf(&script, "CREATE USER '%s'@'%%' IDENTIFIED BY '%s';\n", r.root(), stored[r.root()])
		m.mustAdmin(t, "store the migrated verifiers", script.String())
		check(t, r, m.login)
	})
	t.Run("clickhouse", func(t *testing.T) {
		r := byName["ch"]
		names := append(r.tenants(), r.root())
		c := startClickHouse(t, names, stored)
		check(t, r, c.login)
	})
}

func acctName(release, username string) string {
	return release + "-" + strings.ReplaceAll(username, "_", "-")
}

func declare(t *testing.T, c client.Client, ns, release, username, format string, owner credv1.AccountOwner) {
	t.Helper()
	NewWithT(t).Expect(c.Create(context.Background(), &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: acctName(release, username), Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: release, Username: username, Owner: owner,
			Format: credv1.Format{Name: format}},
	})).To(Succeed())
}

// declarePlaintextRoot declares r's root as a platform account of format
// plaintext, consumed by mariadb-operator.
func declarePlaintextRoot(t *testing.T, c client.Client, ns string, r chartRelease) {
	t.Helper()
	NewWithT(t).Expect(c.Create(context.Background(), &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: acctName(r.name, r.root()), Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: r.name, Username: r.root(), Owner: credv1.OwnerPlatform,
			Format:    credv1.Format{Name: verifier.Plain},
			Plaintext: &credv1.PlaintextDelivery{Consumers: []credv1.ServiceAccountRef{{Namespace: "mariadb-operator", Name: "mariadb-operator"}}}},
	})).To(Succeed())
}

// waitReady waits for every CredentialAccount of ns to be Ready: its
// Secret is created.
func waitReady(t *testing.T, c client.Client, ns string) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		var list credv1.CredentialAccountList
		if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			if a := &list.Items[i]; !conditions.IsReady(a) {
				return fmt.Errorf("%s not Ready: %v", a.Name, a.Status.Conditions)
			}
		}
		return nil
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
}

// settle waits until every account's status reports its Secret's origin
// and history (the controller has seen the last writes), and the Secrets
// stay as they are for a second.
func settle(t *testing.T, c client.Client, ns string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		var list credv1.CredentialAccountList
		if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			a := &list.Items[i]
			var s corev1.Secret
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: a.SecretName()}, &s); err != nil {
				return err
			}
			if string(a.Status.Origin) != s.Annotations[migrationKeys.Origin] ||
				len(a.Status.History) != len(account.ParseHistory(s.Annotations[migrationKeys.History])) {
				return fmt.Errorf("%s does not report its Secret's last write yet", a.Name)
			}
		}
		return nil
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	before := versions(t, c, ns)
	g.Consistently(func() map[string]string { return versions(t, c, ns) }, time.Second, 250*time.Millisecond).Should(Equal(before))
}

// versions are the resourceVersions of the Secrets of ns, by name, and of
// the kept passwords of its accounts, by namespace and name.
func versions(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range []string{ns, devenv.PlatformNamespace} {
		var list corev1.SecretList
		NewWithT(t).Expect(c.List(context.Background(), &list, client.InNamespace(n))).To(Succeed())
		for _, s := range list.Items {
			switch {
			case n == ns:
				out[s.Name] = s.ResourceVersion
			case strings.HasPrefix(s.Name, ns+"."):
				out[n+"/"+s.Name] = s.ResourceVersion
			}
		}
	}
	return out
}

func accountSecret(t *testing.T, c client.Client, ns, release, username string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	NewWithT(t).Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName(release, username)}, &s)).To(Succeed())
	return &s
}

// migrationCommand applies config/samples/migration and returns `kubectl
// credo migrate`, run in process through the command's own entry
// (migrate.Command, as cmd/kubectl-credo calls it) as that sample's
// ServiceAccount, and that identity's username. The runner fails the test
// if the output holds one of sec's values, and logs it.
func migrationCommand(t *testing.T, env *devenv.Environment) (run func(sec *secrets, args ...string) (string, error), user string) {
	t.Helper()
	g := NewWithT(t)
	out, err := env.Kubectl(context.Background(), "apply", "-k", filepath.Join(controlplane.RepoRoot(), "config", "samples", "migration"))
	g.Expect(err).NotTo(HaveOccurred(), "config/samples/migration applies: %s", out)
	user, groups := controlplane.ServiceAccountUser(devenv.PlatformNamespace, "credo-migrate")
	kubeconfig, err := env.WriteKubeconfig(user, groups, "credo-migrate.kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	return func(sec *secrets, args ...string) (string, error) {
		var out bytes.Buffer
		err := migrate.Command(append([]string{"--kubeconfig", kubeconfig}, args...), &out)
		text := out.String()
		clean := sec.scrub(text)
		g.Expect(clean == text).To(BeTrue(), "the command prints no password (output not shown)")
		t.Log(clean)
		return text, err
	}, user
}

// exitCode is the exit status kubectl-credo gives err.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var skipped *migrate.SkippedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &skipped):
		return skipped.ExitCode()
	}
	t.Fatalf("migrate failed: %v", err)
	return 1
}
