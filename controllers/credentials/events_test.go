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
	"strconv"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/testenv"
)

func TestAccountCollisionEventNamesTheAccountAndItsSecret(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "shop", "mariadb", nil)
	newAccount(t, ns, "first", "shop", "Shop_User", "mysql-native")
	newAccount(t, ns, "second", "shop", "shop.user", "mysql-native")

	e := env.WarningEvent(g, ns, credv1.CredentialAccountKind, "second", credv1.AccountCollisionReason)
	g.Expect(e.Annotations).To(And(
		HaveKeyWithValue(credv1.EventReleaseKey, "shop"),
		HaveKeyWithValue(credv1.EventUsernameKey, "shop.user"),
		HaveKeyWithValue(credv1.EventSecretKey, "shop.shop-user"+credv1.AccountSecretSuffix),
		HaveKeyWithValue(credv1.EventOwnerKey, string(credv1.OwnerTenant)),
	))
}

// Every Warning about a release is recorded on its HelmRelease too, where
// `flux events --for HelmRelease/<name>` and `kubectl describe helmrelease`
// look: the same reason, message and metadata as on the CredentialAccount,
// once per transition like it.
func TestWarningsAboutAReleaseAreAlsoOnItsHelmRelease(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	shop := env.NewHelmRelease(t, ns, "shop", "mariadb", nil)
	newAccount(t, ns, "first", "shop", "Shop_User", "mysql-native")
	newAccount(t, ns, "second", "shop", "shop.user", "mysql-native")
	db := env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	env.NewSecret(t, ns, "db.app.account", nil, nil, map[string][]byte{"password": []byte("chart-rendered")})
	newAccount(t, ns, "db-app", "db", "app", "mysql-native")

	for _, c := range []struct {
		hr      *helmv2.HelmRelease
		account string
		reason  string
	}{
		{shop, "second", credv1.AccountCollisionReason},
		{db, "db-app", credv1.NameCollisionReason},
	} {
		onRelease := env.ReleaseWarning(g, c.hr, c.reason)
		onAccount := env.WarningEvent(g, ns, credv1.CredentialAccountKind, c.account, c.reason)
		g.Expect(onRelease.Message).To(Equal(onAccount.Message))
		g.Expect(onRelease.Annotations).To(Equal(onAccount.Annotations))
		g.Expect(onRelease.Annotations).To(HaveKeyWithValue(credv1.EventReleaseKey, c.hr.Name))
		g.Expect(onRelease.Source.Component).To(Equal(onAccount.Source.Component), "recorded by the credential-controller")
		g.Expect(onRelease.Message).NotTo(ContainSubstring("chart-rendered"))

		// Reconciles that find the same failure record nothing more, on
		// either object.
		for range 3 {
			requestAccountReconcile(g, ns, c.account)
		}
		for kind, name := range map[string]string{helmv2.HelmReleaseKind: c.hr.Name, credv1.CredentialAccountKind: c.account} {
			g.Consistently(func() int32 { return env.WarningCount(g, ns, kind, name, c.reason) }, 2*time.Second, 200*time.Millisecond).
				Should(Equal(int32(1)), "one %s Warning on %s %s", c.reason, kind, name)
		}
	}
}

// A password minted or revoked while the release is suspended does not
// reach an engine configured through valuesFrom: a Warning on the account
// and on its HelmRelease says so, once per operation, naming no secret.
func TestAMintWhileTheReleaseIsSuspendedIsAWarningOnTheRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := testenv.HelmReleaseObject(ns, "ch", "clickhouse", nil)
	hr.Spec.Suspend = true
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ReleaseSuspendedReason))
	g.Expect(env.WarningCount(g, ns, helmv2.HelmReleaseKind, "ch", credv1.ReleaseSuspendedReason)).To(BeZero(),
		"a suspended release is no Warning before a password waits on it")

	ops := &accessapi.Operations{Client: env.Client, Keys: testAccountKeys}
	res, err := ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "ch-app"}, "alice")
	g.Expect(err).NotTo(HaveOccurred())
	onRelease := env.ReleaseWarning(g, hr, credv1.ReleaseSuspendedReason)
	onAccount := env.WarningEvent(g, ns, credv1.CredentialAccountKind, "ch-app", credv1.ReleaseSuspendedReason)
	g.Expect(onRelease.Message).To(Equal(onAccount.Message))
	g.Expect(onRelease.Annotations).To(Equal(onAccount.Annotations))
	g.Expect(onRelease.Message).To(And(ContainSubstring("minted"), ContainSubstring("alice"), ContainSubstring("ch.app.account")))
	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch.app.account"}, &s)).To(Succeed())
	for _, secret := range []string{res.Password, string(s.Data[credv1.PasswordKey])} {
		g.Expect(onRelease.Message).NotTo(ContainSubstring(secret))
		for _, v := range onRelease.Annotations {
			g.Expect(v).NotTo(ContainSubstring(secret))
		}
	}
	requestAccountReconcile(g, ns, "ch-app")
	g.Consistently(func() int32 {
		return env.WarningCount(g, ns, helmv2.HelmReleaseKind, "ch", credv1.ReleaseSuspendedReason)
	},
		2*time.Second, 200*time.Millisecond).Should(Equal(int32(1)), "one Warning per mint")

	_, err = ops.Revoke(ctx, ns, accessv1.AccountRequestSpec{Account: "ch-app"}, "bob")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int32 {
		return env.WarningCount(g, ns, helmv2.HelmReleaseKind, "ch", credv1.ReleaseSuspendedReason)
	},
		15*time.Second, 100*time.Millisecond).Should(Equal(int32(2)), "a revocation the engine does not see is a Warning too")
}

// requestAccountReconcile asks for a reconcile of an account, as `flux
// reconcile` does, and waits until it is handled.
func requestAccountReconcile(g Gomega, ns, name string) {
	ctx := context.Background()
	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	a := accountWith(g, ns, name, func(*credv1.CredentialAccount) bool { return true })
	patch := client.MergeFrom(a.DeepCopy())
	metav1.SetMetaDataAnnotation(&a.ObjectMeta, meta.ReconcileRequestAnnotation, token)
	g.Expect(env.Client.Patch(ctx, a, patch)).To(Succeed())
	accountWith(g, ns, name, func(a *credv1.CredentialAccount) bool { return a.Status.LastHandledReconcileAt == token })
}
