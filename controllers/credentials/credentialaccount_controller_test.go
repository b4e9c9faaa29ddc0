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
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

// scramShape is PostgreSQL's stored form with a 16-byte salt.
var scramShape = regexp.MustCompile(`^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$`)

func newAccount(t *testing.T, ns, name, release, username, format string, mutate ...func(*credv1.CredentialAccount)) *credv1.CredentialAccount {
	t.Helper()
	a := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: release, Username: username, Format: credv1.Format{Name: format}},
	}
	for _, m := range mutate {
		m(a)
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), a)).To(Succeed())
	return a
}

func accountWith(g Gomega, ns, name string, match func(*credv1.CredentialAccount) bool) *credv1.CredentialAccount {
	var a credv1.CredentialAccount
	g.Eventually(func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &a); err != nil {
			return false
		}
		return match(&a)
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "CredentialAccount %s/%s conditions: %+v", ns, name, &a.Status.Conditions)
	return &a
}

func accountReady(a *credv1.CredentialAccount) bool {
	return conditions.IsReady(a) && a.Status.ObservedGeneration == a.Generation
}

func accountReason(cond, reason string) func(*credv1.CredentialAccount) bool {
	return func(a *credv1.CredentialAccount) bool {
		return conditions.IsTrue(a, cond) && conditions.GetReason(a, cond) == reason
	}
}

func TestDeclaredAccountGetsANotIssuedVerifierSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	newAccount(t, ns, "pg-app", "pg", "App_User", "scram-sha-256", func(a *credv1.CredentialAccount) {
		a.Spec.SecretLabels = map[string]string{"cnpg.io/reload": "true"}
	})

	a := accountWith(g, ns, "pg-app", accountReady)
	g.Expect(a.Status.SecretName).To(Equal("pg.app-user.account"))
	g.Expect(a.Status.Origin).To(Equal(credv1.OriginNotIssued))
	g.Expect(a.Status.History).To(HaveLen(1))
	g.Expect(testenv.KStatus(t, a)).To(BeEquivalentTo("Current"))

	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg.app-user.account"}, &s)).To(Succeed())
	g.Expect(s.Type).To(Equal(corev1.SecretTypeBasicAuth))
	g.Expect(string(s.Data["username"])).To(Equal("App_User"))
	g.Expect(scramShape.Match(s.Data["password"])).To(BeTrue(), "the password is a SCRAM-SHA-256 verifier (value not printed)")
	g.Expect(s.Data).To(HaveLen(2))
	g.Expect(s.Labels).To(HaveKeyWithValue("cnpg.io/reload", "true"))
	g.Expect(s.Annotations).To(HaveKeyWithValue(testAccountKeys.Origin, "NotIssued"))
	var hist []map[string]any
	g.Expect(json.Unmarshal([]byte(s.Annotations[testAccountKeys.History]), &hist)).To(Succeed())
	g.Expect(hist).To(HaveLen(1))
	g.Expect(s.OwnerReferences).To(HaveLen(1))
	g.Expect(s.OwnerReferences[0].UID).To(Equal(hr.UID))

	// The verifier never shows up in the account's status or events.
	assertNoSecretMaterial(g, ns, string(s.Data["password"]))

	// Deleting the release collects the Secret (the account, still
	// declared, gets another, awaiting the next release:
	// TestAnAccountsSecretIsWrittenBeforeItsRelease).
	g.Expect(env.Client.Delete(ctx, hr)).To(Succeed())
	g.Eventually(func() bool {
		var now corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(&s), &now)
		return apierrors.IsNotFound(err) || (err == nil && now.UID != s.UID)
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
}

func TestForeignSecretAtTheAccountNameIsNeverWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	foreign := env.NewSecret(t, ns, "db.app.account", nil, nil, map[string][]byte{"password": []byte("chart-rendered")})
	newAccount(t, ns, "db-app", "db", "app", "mysql-native")

	a := accountWith(g, ns, "db-app", accountReason(credv1.SecretFailedCondition, credv1.NameCollisionReason))
	g.Expect(conditions.IsStalled(a)).To(BeTrue())
	var got corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(foreign.ResourceVersion))
}

func TestUnknownOrUnbuiltFormatsAreRefused(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	newAccount(t, ns, "md5", "db", "u1", "md5")
	newAccount(t, ns, "hook", "db", "u2", "custom", func(a *credv1.CredentialAccount) {
		a.Spec.Format.Kind = credv1.FormatWebhook
		a.Spec.Format.Webhook = &credv1.WebhookFormat{ClientConfig: credv1.WebhookClientConfig{
			Service: &credv1.WebhookService{Namespace: "hashing", Name: "verifier"}}}
	})
	a := accountWith(g, ns, "md5", accountReason(credv1.FormatRefusedCondition, credv1.UnknownFormatReason))
	g.Expect(conditions.GetMessage(a, credv1.FormatRefusedCondition)).To(ContainSubstring("md5"))
	hook := accountWith(g, ns, "hook", accountReason(credv1.FormatRefusedCondition, credv1.UnsupportedFormatKindReason))
	g.Expect(conditions.GetMessage(hook, credv1.FormatRefusedCondition)).To(HavePrefix("format kind Webhook is part of the API but not built yet; "))
	g.Expect(apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db.u1.account"}, &corev1.Secret{}))).To(BeTrue())
}

func TestClickHouseAccountIsDeliveredThroughValuesFrom(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := testenv.HelmReleaseObject(ns, "ch", "clickhouse", nil)
	other := helmv2.ValuesReference{Kind: "ConfigMap", Name: "tuning", ValuesKey: "values.yaml"}
	hr.Spec.ValuesFrom = []helmv2.ValuesReference{other}
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	acct := newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", accountReady)

	want := helmv2.ValuesReference{Kind: "Secret", Name: "ch.app.account", ValuesKey: "password", TargetPath: "users.app.password_sha256_hex"}
	g.Eventually(func() []helmv2.ValuesReference {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)
		return hr.Spec.ValuesFrom
	}, 10*time.Second, 100*time.Millisecond).Should(Equal([]helmv2.ValuesReference{want, other}), "the account's entry first, before every entry credo did not write")
	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch.app.account"}, &s)).To(Succeed())
	g.Expect(s.Labels).To(HaveKeyWithValue("reconcile.fluxcd.io/watch", "Enabled"))

	g.Expect(env.Client.Delete(ctx, acct)).To(Succeed())
	g.Eventually(func() []helmv2.ValuesReference {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)
		return hr.Spec.ValuesFrom
	}, 10*time.Second, 100*time.Millisecond).Should(Equal([]helmv2.ValuesReference{other}))
}

func TestReleaseAppliedFromGitIsNotEditedButTold(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "ch", "clickhouse", map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps"})
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	a := accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ManagedByGitOpsReason))
	g.Expect(conditions.GetMessage(a, credv1.DeliveryFailedCondition)).To(ContainSubstring("targetPath: users.app.password_sha256_hex"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Spec.ValuesFrom).To(BeEmpty())
}

func TestSuspendedReleaseIsReported(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := testenv.HelmReleaseObject(ns, "ch", "clickhouse", nil)
	hr.Spec.Suspend = true
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	a := accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ReleaseSuspendedReason))
	g.Expect(conditions.IsReady(a)).To(BeFalse())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Spec.Suspend).To(BeTrue(), "a suspended release is reported, never resumed")
}

func TestPlatformAccountIsGeneratedKeptAndRotatedOnRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	acct := newAccount(t, ns, "ch-root", "ch", "root", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.Owner = credv1.OwnerPlatform
	})
	a := accountWith(g, ns, "ch-root", accountReady)
	g.Expect(a.Status.Origin).To(Equal(credv1.OriginGenerated))

	keptKey := client.ObjectKey{Namespace: testPlatformNamespace, Name: ns + ".ch.root.account"}
	verifierOfKept := func() (string, string) {
		var kept, acctSecret corev1.Secret
		g.Expect(env.Client.Get(ctx, keptKey, &kept)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch.root.account"}, &acctSecret)).To(Succeed())
		sum := sha256.Sum256(kept.Data["password"])
		return hex.EncodeToString(sum[:]), string(acctSecret.Data["password"])
	}
	want, got := verifierOfKept()
	g.Expect(got == want).To(BeTrue(), "the account Secret holds the verifier of the kept password")
	first := got

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	acct.Spec.Rotate = "2026-12-02"
	g.Expect(env.Client.Update(ctx, acct)).To(Succeed())
	a = accountWith(g, ns, "ch-root", func(a *credv1.CredentialAccount) bool {
		return accountReady(a) && a.Status.LastHandledRotate == "2026-12-02"
	})
	g.Expect(a.Status.History).To(HaveLen(2))
	want, got = verifierOfKept()
	g.Expect(got == want).To(BeTrue(), "the rotated verifier matches the kept password")
	g.Expect(got != first).To(BeTrue(), "rotation changed the password")

	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, keptKey, &kept)).To(Succeed())
	assertNoSecretMaterial(g, ns, string(kept.Data["password"]), got)

	g.Expect(env.Client.Delete(ctx, acct)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, keptKey, &corev1.Secret{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "the kept password goes with the account")
}

// assertNoSecretMaterial fails when any value appears in an event or in a
// CredentialAccount's status in the namespace, or in the controllers' logs.
// It never prints the values.
func assertNoSecretMaterial(g Gomega, ns string, values ...string) {
	var events corev1.EventList
	g.Expect(env.Client.List(context.Background(), &events, client.InNamespace(ns))).To(Succeed())
	var accts credv1.CredentialAccountList
	g.Expect(env.Client.List(context.Background(), &accts, client.InNamespace(ns))).To(Succeed())
	var b strings.Builder
	for _, e := range events.Items {
		b.WriteString(e.Message)
		b.WriteString(e.Reason)
		for k, v := range e.Annotations {
			b.WriteString(k + v)
		}
	}
	for _, a := range accts.Items {
		raw, err := json.Marshal(a.Status)
		g.Expect(err).NotTo(HaveOccurred())
		b.Write(raw)
	}
	logs := env.Logs.String()
	g.Expect(strings.Contains(logs, `"controller": "credentialaccount"`)).To(BeTrue(), "the log scan must see the controller's lines")
	b.WriteString(logs)
	haystack := b.String()
	for i, v := range values {
		g.Expect(v != "").To(BeTrue())
		g.Expect(strings.Contains(haystack, v)).To(BeFalse(), "secret value %d leaked into an event, a status or a log line", i)
	}
}
