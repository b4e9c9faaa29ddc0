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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/devenv"
)

// minted is one account minted through kube-apiserver: the password the
// response returned and the verifier its Secret then held.
type minted struct{ username, password, stored string }

// TestMintedPasswordsLogInToRealEngines runs credo as `make dev` does (the
// controller binaries, the access API behind kube-apiserver's aggregation
// layer), mints a password for a PostgreSQL, a MariaDB and a ClickHouse
// account, stores in each real engine the verifier the account Secret holds,
// and logs in with the password the mint returned.
func TestMintedPasswordsLogInToRealEngines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := devenv.Start(ctx, devenv.Options{Samples: "-"})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	ns := "engines-mint"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "db",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}}},
	})).To(Succeed())

	sec := &secrets{}
	mint := func(name, username, format string) minted {
		t.Helper()
		acct := &credv1.CredentialAccount{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       credv1.CredentialAccountSpec{Release: "db", Username: username, Format: credv1.Format{Name: format}},
		}
		g.Expect(env.Client.Create(ctx, acct)).To(Succeed())
		g.Eventually(func() bool {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct) == nil && conditions.IsReady(acct)
		}, time.Minute, 200*time.Millisecond).Should(BeTrue(), "account %s Ready", name)
		m := &accessv1.Mint{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: accessv1.AccountRequestSpec{Account: name}}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed(), "mint %s through kube-apiserver", name)
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Status.SecretName}, &s)).To(Succeed())
		g.Expect(s.Annotations["credentials.cozystack.io/origin"]).To(Equal("Minted"))
		out := minted{username: username, password: m.Status.Password, stored: string(s.Data[credv1.PasswordKey])}
		sec.add(out.password, out.stored)
		g.Expect(len(out.password) >= 32).To(BeTrue(), "%s: a password of at least 32 characters", name)
		return out
	}
	pg := mint("pg", "app_pg", "scram-sha-256")
	maria := mint("maria", "app_maria", "mysql-native")
	ch := mint("ch", "app_ch", "sha256-hex")

	t.Run("postgresql", func(t *testing.T) {
		g := NewWithT(t)
		p := startPostgres(t, sec)
		p.mustPSQL(t, "store the minted verifier",
			fmt.Sprintf("CREATE ROLE %s LOGIN;\nALTER ROLE %s PASSWORD '%s';\n", pg.username, pg.username, pg.stored))
		g.Expect(p.rolpasswords(t, "app")[pg.username] == pg.stored).To(BeTrue(), "stored as is")
		g.Expect(p.login(pg.username, pg.password).ok()).To(BeTrue(), "the minted password logs in")
		g.Expect(p.login(pg.username, pg.password+"x").ok()).To(BeFalse(), "a wrong one does not")
	})
	t.Run("mariadb", func(t *testing.T) {
		g := NewWithT(t)
		m := startMariaDB(t, sec)
		m.mustAdmin(t, "store the minted verifier",
			fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s';\n", maria.username, maria.stored))
		g.Expect(m.login(maria.username, maria.password).ok()).To(BeTrue(), "the minted password logs in")
		g.Expect(m.login(maria.username, maria.password+"x").ok()).To(BeFalse(), "a wrong one does not")
	})
	t.Run("clickhouse", func(t *testing.T) {
		g := NewWithT(t)
		c := startClickHouse(t, []string{ch.username}, map[string]string{ch.username: ch.stored})
		g.Expect(c.login(ch.username, ch.password).ok()).To(BeTrue(), "the minted password logs in")
		g.Expect(c.login(ch.username, ch.password+"x").ok()).To(BeFalse(), "a wrong one does not")
	})
}
