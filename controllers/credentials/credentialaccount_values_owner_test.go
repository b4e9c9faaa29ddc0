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
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

// platformLabels are the labels cozystack's apps API puts on every
// application release; the suite's --values-from-owner-selector is the
// default, which matches them.
func platformLabels(kind, name string) map[string]string {
	return map[string]string{
		"apps.cozystack.io/application.group": "apps.cozystack.io",
		"apps.cozystack.io/application.kind":  kind,
		"apps.cozystack.io/application.name":  name,
	}
}

// cozystackValues is the entry the platform's definition lists first on
// every application release.
var cozystackValues = helmv2.ValuesReference{Kind: "Secret", Name: "cozystack-values"}

// A release whose valuesFrom the platform owns (it matches
// --values-from-owner-selector): credo never writes the list. While the
// platform's list lacks the account's entry the account is Stalled
// ValuesFromMissing, with one Warning giving the entry to list and where;
// once the platform lists it the account is Ready and Applied follows
// helm-controller as for any release.
func TestReleaseWhoseValuesFromThePlatformOwnsIsNeverWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := testenv.HelmReleaseObject(ns, "ch", "clickhouse", platformLabels("ClickHouse", "ch"))
	hr.Spec.ValuesFrom = []helmv2.ValuesReference{cozystackValues}
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	platform := startValuesFromWriter(t, hr, []helmv2.ValuesReference{cozystackValues})
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})

	a := accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ValuesFromMissingReason))
	g.Expect(conditions.IsStalled(a)).To(BeTrue())
	g.Expect(conditions.GetMessage(a, credv1.DeliveryFailedCondition)).To(And(
		ContainSubstring("--values-from-owner-selector apps.cozystack.io/application.group=apps.cozystack.io"),
		ContainSubstring("application definition"),
		ContainSubstring("{kind: Secret, name: ch.app.account, valuesKey: password, targetPath: users.app.password_sha256_hex}")))
	env.ReleaseWarning(g, hr, credv1.ValuesFromMissingReason)
	warnings := func() int32 {
		return env.WarningCount(g, ns, credv1.CredentialAccountKind, "ch-app", credv1.ValuesFromMissingReason)
	}
	// Recorded on the transition, as ManagedByGitOps is (Events.Fail): a
	// reconcile that the account Secret's creation queued may read the
	// account before its status shows the condition, and record it again.
	g.Eventually(warnings, 5*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1))
	time.Sleep(time.Second)
	first := warnings()
	g.Expect(first).To(BeNumerically("<=", 2))

	// Every change of the release reconciles the account again: no new
	// Warning, and the list is still the platform's.
	for i := range 3 {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		hr.Spec.Interval = metav1.Duration{Duration: time.Duration(6+i) * time.Minute}
		g.Expect(env.Client.Update(ctx, hr)).To(Succeed())
	}
	g.Consistently(warnings, 3*time.Second, 200*time.Millisecond).Should(Equal(first), "no Warning storm")

	// The platform's definition lists the entry now.
	entry := helmv2.ValuesReference{Kind: "Secret", Name: "ch.app.account", ValuesKey: "password", TargetPath: "users.app.password_sha256_hex"}
	platform.Set([]helmv2.ValuesReference{cozystackValues, entry})
	a = accountWith(g, ns, "ch-app", accountReady)
	g.Expect(conditions.Has(a, credv1.DeliveryFailedCondition)).To(BeFalse())

	// Applied, as for a release credo writes: a mint, the reconcile credo
	// requests (an annotation, not valuesFrom), helm-controller's status.
	password := mint(g, ns, "ch-app")
	s := accountSecret(g, ns, "ch.app.account")
	a = accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool {
		return a.Status.AppliedRequest != nil && a.Status.AppliedRequest.SecretResourceVersion == s.ResourceVersion
	})
	releaseStatus(g, hr, a.Status.AppliedRequest.Token, metav1.ConditionTrue, "UpgradeSucceeded")
	a = accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionTrue, credv1.ReleaseReconciledReason))
	assertReadyUnaffected(t, g, a)

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Spec.ValuesFrom).To(Equal([]helmv2.ValuesReference{cozystackValues, entry}), "the platform's list, as it wrote it")
	g.Expect(platform.OnlyLists([]helmv2.ValuesReference{cozystackValues}, []helmv2.ValuesReference{cozystackValues, entry})).To(BeTrue(),
		"no version of the release had a list the platform did not write")
	g.Expect(platform.ManagerWroteValuesFrom(CredentialFieldOwner)).To(BeFalse(), "credo's field manager never owned spec.valuesFrom")

	// Deleting the account leaves the platform's entry to the platform.
	g.Expect(env.Client.Delete(ctx, a)).To(Succeed())
	g.Consistently(func() []helmv2.ValuesReference {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)
		return hr.Spec.ValuesFrom
	}, 2*time.Second, 200*time.Millisecond).Should(Equal([]helmv2.ValuesReference{cozystackValues, entry}))
	g.Expect(platform.ManagerWroteValuesFrom(CredentialFieldOwner)).To(BeFalse())

	verifier := string(s.Data[credv1.PasswordKey])
	assertNoSecretMaterial(g, ns, password, verifier)
}

// A release credo adds its entry to (no owner selected), while a stand-in
// for the platform sets spec.valuesFrom to its own list on every change:
// credo puts its entry back maxRewrites times, then stops writing and
// reports ValuesFromContested once; the metric counts the rewrites. Before
// the bound, the two writers fought for as long as the release existed.
// When the owner lists the entry, the contest ends.
func TestEntryErasedByAnotherWriterIsPutBackABoundedNumberOfTimes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tuning := helmv2.ValuesReference{Kind: "ConfigMap", Name: "tuning", ValuesKey: "values.yaml"}
	hr := testenv.HelmReleaseObject(ns, "ch", "clickhouse", nil)
	hr.Spec.ValuesFrom = []helmv2.ValuesReference{tuning}
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	platform := startValuesFromWriter(t, hr, []helmv2.ValuesReference{tuning})
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	entry := helmv2.ValuesReference{Kind: "Secret", Name: "ch.app.account", ValuesKey: "password", TargetPath: "users.app.password_sha256_hex"}

	// The first write, and maxRewrites more; then none.
	g.Eventually(func() int { return platform.VersionsWith(entry) }, 20*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1+maxRewrites))
	g.Consistently(func() int { return platform.VersionsWith(entry) }, 5*time.Second, 200*time.Millisecond).Should(Equal(1+maxRewrites),
		"credo stops writing the release once the entry is contested")
	a := accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ValuesFromContestedReason))
	g.Expect(conditions.IsStalled(a)).To(BeTrue())
	g.Expect(conditions.GetMessage(a, credv1.DeliveryFailedCondition)).To(And(
		ContainSubstring("--values-from-owner-selector"),
		ContainSubstring("{kind: Secret, name: ch.app.account, valuesKey: password, targetPath: users.app.password_sha256_hex}")))
	env.ReleaseWarning(g, hr, credv1.ValuesFromContestedReason)
	g.Expect(env.WarningCount(g, ns, credv1.CredentialAccountKind, "ch-app", credv1.ValuesFromContestedReason)).To(Equal(int32(1)))
	g.Expect(testenv.CounterValue(g, "credo_credential_values_from_rewritten_total", map[string]string{"namespace": ns})).To(Equal(float64(maxRewrites)))

	// Changes of the release reconcile the account: no write, no new Warning.
	requestAccountReconcile(g, ns, "ch-app")
	g.Consistently(func() int32 {
		return env.WarningCount(g, ns, credv1.CredentialAccountKind, "ch-app", credv1.ValuesFromContestedReason)
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(int32(1)))
	g.Expect(platform.VersionsWith(entry)).To(Equal(1 + maxRewrites))

	// The owner lists the entry: the contest is over, the account Ready.
	platform.Set([]helmv2.ValuesReference{entry, tuning})
	accountWith(g, ns, "ch-app", accountReady)
}
