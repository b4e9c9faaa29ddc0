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
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/engine"
	"github.com/credo-dev/credo/tests/testenv"
)

// appliedIs matches an account whose Applied condition has the status and
// reason, and, when True, whose appliedChange is its lastChange: the
// conditions and the other status fields are two patches.
func appliedIs(status metav1.ConditionStatus, reason string) func(*credv1.CredentialAccount) bool {
	return func(a *credv1.CredentialAccount) bool {
		c := conditions.Get(a, credv1.AppliedCondition)
		if c == nil || c.Status != status || c.Reason != reason {
			return false
		}
		return status != metav1.ConditionTrue || (a.Status.AppliedChange != nil && a.Status.AppliedChange.Equal(a.Status.LastChange))
	}
}

// mint mints the account's password through the access API's operations,
// as kube-apiserver's aggregated API serves it, and returns the password.
func mint(g Gomega, ns, account string) string {
	ops := &accessapi.Operations{Client: env.Client, Keys: testAccountKeys}
	res, err := ops.Mint(context.Background(), ns, accessv1.AccountRequestSpec{Account: account}, "alice")
	g.Expect(err).NotTo(HaveOccurred())
	return res.Password
}

// accountSecret reads the account Secret.
func accountSecret(g Gomega, ns, name string) *corev1.Secret {
	var s corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

// assertReadyUnaffected: Applied, whatever it says, leaves Ready True and
// kstatus Current, with no Reconciling or Stalled condition.
func assertReadyUnaffected(t *testing.T, g Gomega, a *credv1.CredentialAccount) {
	t.Helper()
	g.Expect(accountReady(a)).To(BeTrue(), "Ready: %+v", a.Status.Conditions)
	g.Expect(conditions.Has(a, meta.ReconcilingCondition)).To(BeFalse())
	g.Expect(conditions.Has(a, meta.StalledCondition)).To(BeFalse())
	g.Expect(testenv.KStatus(t, a)).To(BeEquivalentTo("Current"))
}

// writeStatus updates the status subresource of an operator's object as
// the operator does: set applies the fields to the object's status.
func writeStatus(g Gomega, u *unstructured.Unstructured, set func(status map[string]any)) {
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	if status == nil {
		status = map[string]any{}
	}
	set(status)
	g.Expect(unstructured.SetNestedMap(u.Object, status, "status")).To(Succeed())
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
}

// A CloudNativePG Cluster's managed role reading the account Secret:
// Applied is Unknown until the Cluster reports the Secret's current
// resourceVersion, True then, Unknown again after the next mint, and False
// while CloudNativePG cannot reconcile the role. Ready never changes.
func TestAppliedFollowsCloudNativePGManagedRoles(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	cluster := engine.Kinds[0].New()
	cluster.SetNamespace(ns)
	cluster.SetName("pg")
	g.Expect(unstructured.SetNestedSlice(cluster.Object, []any{
		map[string]any{"name": "app", "login": true, "passwordSecret": map[string]any{"name": "pg.app.account"}},
		map[string]any{"name": "other", "passwordSecret": map[string]any{"name": "pg.other.account"}},
	}, "spec", "managed", "roles")).To(Succeed())
	g.Expect(unstructured.SetNestedField(cluster.Object, int64(1), "spec", "instances")).To(Succeed())
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	newAccount(t, ns, "pg-app", "pg", "app", "scram-sha-256")

	a := accountWith(g, ns, "pg-app", appliedIs(metav1.ConditionUnknown, credv1.NotIssuedReason))
	assertReadyUnaffected(t, g, a)

	password := mint(g, ns, "pg-app")
	a = accountWith(g, ns, "pg-app", appliedIs(metav1.ConditionUnknown, credv1.RolePendingReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(a.Status.AppliedChange).To(BeNil())

	s := accountSecret(g, ns, "pg.app.account")
	writeStatus(g, cluster, func(st map[string]any) {
		st["managedRolesStatus"] = map[string]any{"passwordStatus": map[string]any{
			"app": map[string]any{"resourceVersion": s.ResourceVersion, "transactionID": int64(812)},
		}}
	})
	a = accountWith(g, ns, "pg-app", appliedIs(metav1.ConditionTrue, credv1.RoleReconciledReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(a.Status.AppliedChange).NotTo(BeNil())
	g.Expect(a.Status.AppliedChange.Equal(a.Status.LastChange)).To(BeTrue())
	g.Expect(conditions.GetMessage(a, credv1.AppliedCondition)).To(And(
		ContainSubstring(a.Status.LastChange.UTC().Format(time.RFC3339)), ContainSubstring("Cluster pg"), ContainSubstring("role app")))
	firstChange := *a.Status.LastChange

	// The next mint: the Cluster still reports the previous version.
	time.Sleep(1100 * time.Millisecond) // lastChange has a resolution of one second
	second := mint(g, ns, "pg-app")
	a = accountWith(g, ns, "pg-app", func(a *credv1.CredentialAccount) bool {
		return appliedIs(metav1.ConditionUnknown, credv1.RolePendingReason)(a) && a.Status.LastChange.After(firstChange.Time)
	})
	assertReadyUnaffected(t, g, a)
	g.Expect(a.Status.AppliedChange.Equal(&firstChange)).To(BeTrue(), "appliedChange still names the change known applied")

	writeStatus(g, cluster, func(st map[string]any) {
		st["managedRolesStatus"] = map[string]any{
			"passwordStatus":  map[string]any{"app": map[string]any{"resourceVersion": s.ResourceVersion}},
			"cannotReconcile": map[string]any{"app": []any{"could not perform UPDATE on role app: permission denied"}},
		}
	})
	a = accountWith(g, ns, "pg-app", appliedIs(metav1.ConditionFalse, credv1.RoleCannotReconcileReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(conditions.GetMessage(a, credv1.AppliedCondition)).To(ContainSubstring("permission denied"))

	verifier := string(accountSecret(g, ns, "pg.app.account").Data[credv1.PasswordKey])
	assertNoSecretMaterial(g, ns, password, second, verifier)
}

// A mariadb-operator User reports no version of the Secret it applied:
// Applied is True only when its Ready became True at or after the last
// change, False while it is not Ready, and Unknown when Ready stayed True
// across the change.
func TestAppliedFollowsMariaDBUserReadyTransitions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	user := engine.Kinds[1].New()
	user.SetNamespace(ns)
	user.SetName("app")
	g.Expect(unstructured.SetNestedMap(user.Object, map[string]any{
		"mariaDbRef":               map[string]any{"name": "db"},
		"passwordHashSecretKeyRef": map[string]any{"name": "db.app.account", "key": "password"},
	}, "spec")).To(Succeed())
	g.Expect(env.Client.Create(ctx, user)).To(Succeed())
	readyAt := func(status string, at time.Time) func(map[string]any) {
		return func(st map[string]any) {
			st["conditions"] = []any{map[string]any{"type": "Ready", "status": status, "reason": "Created",
				"message": "Created", "lastTransitionTime": at.UTC().Format(time.RFC3339)}}
		}
	}
	writeStatus(g, user, readyAt("True", time.Now().Add(-time.Hour)))
	newAccount(t, ns, "db-app", "db", "app", "mysql-native")
	accountWith(g, ns, "db-app", appliedIs(metav1.ConditionUnknown, credv1.NotIssuedReason))

	password := mint(g, ns, "db-app")
	a := accountWith(g, ns, "db-app", appliedIs(metav1.ConditionUnknown, credv1.EngineDoesNotReportVersionReason))
	assertReadyUnaffected(t, g, a)

	writeStatus(g, user, readyAt("False", time.Now()))
	a = accountWith(g, ns, "db-app", appliedIs(metav1.ConditionFalse, credv1.UserNotReadyReason))
	assertReadyUnaffected(t, g, a)

	writeStatus(g, user, readyAt("True", time.Now()))
	a = accountWith(g, ns, "db-app", appliedIs(metav1.ConditionTrue, credv1.UserReadyReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(a.Status.AppliedChange.Equal(a.Status.LastChange)).To(BeTrue())

	verifier := string(accountSecret(g, ns, "db.app.account").Data[credv1.PasswordKey])
	assertNoSecretMaterial(g, ns, password, verifier)
}

// An account nothing credo observes reads: Applied is Unknown
// EngineNotObserved, never a guess.
func TestAppliedIsUnknownWhenNoEngineIsObserved(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "kv", "valkey", nil)
	newAccount(t, ns, "kv-app", "kv", "app", "plaintext")
	accountWith(g, ns, "kv-app", accountReady)
	mint(g, ns, "kv-app")
	a := accountWith(g, ns, "kv-app", appliedIs(metav1.ConditionUnknown, credv1.EngineNotObservedReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(conditions.GetMessage(a, credv1.AppliedCondition)).To(ContainSubstring("kv.app.account"))
}

// releaseStatus writes the status helm-controller writes after handling
// the reconcile request token: Ready (ready, with reason), the release v2
// deployed with the attempted config digest, and Helm's record of v2 with
// the values valuesFrom gives it now.
func releaseStatus(g Gomega, hr *helmv2.HelmRelease, token string, ready metav1.ConditionStatus, reason string) {
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	now := metav1.Now()
	hr.Status.ObservedGeneration = hr.Generation
	hr.Status.LastHandledReconcileAt = token
	hr.Status.LastAttemptedConfigDigest = "sha256:2f1c"
	hr.Status.History = helmv2.Snapshots{{
		Name: hr.Name, Namespace: hr.Namespace, Version: 2, Status: "deployed", ChartName: "clickhouse", ChartVersion: "1.0.0",
		ConfigDigest: "sha256:2f1c", Digest: "sha256:9a7e", FirstDeployed: now, LastDeployed: now,
	}}
	conditions.Set(hr, &metav1.Condition{Type: meta.ReadyCondition, Status: ready, Reason: reason,
		Message: "Helm upgrade succeeded", ObservedGeneration: hr.Generation, LastTransitionTime: now})
	// Helm records the release before helm-controller reports it.
	writeHelmRecord(g, hr.Namespace, hr.Name, 2, deployedConfig(g, hr))
	g.Expect(env.Client.Status().Update(ctx, hr)).To(Succeed())
}

// An account delivered through valuesFrom, with helm-controller's status
// written as helm-controller writes it: after each change of the account
// Secret credo requests a reconcile with a token of its own; Applied is
// True once helm-controller handled that token and the release is Ready
// with its latest values deployed, False when the release failed, and a
// request someone else overwrote before it was handled is made again.
func TestAppliedFollowsHelmControllerForValuesFrom(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionUnknown, credv1.NotIssuedReason))

	password := mint(g, ns, "ch-app")
	s := accountSecret(g, ns, "ch.app.account")
	a := accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool {
		return appliedIs(metav1.ConditionUnknown, credv1.ReleaseReconcilePendingReason)(a) &&
			a.Status.AppliedRequest != nil && a.Status.AppliedRequest.SecretResourceVersion == s.ResourceVersion
	})
	assertReadyUnaffected(t, g, a)
	token := a.Status.AppliedRequest.Token
	g.Expect(token).To(HavePrefix("credo:"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Annotations).To(HaveKeyWithValue(meta.ReconcileRequestAnnotation, token))

	// Handled, but the release failed.
	releaseStatus(g, hr, token, metav1.ConditionFalse, "UpgradeFailed")
	a = accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionFalse, credv1.ReleaseFailedReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(conditions.GetMessage(a, credv1.AppliedCondition)).To(ContainSubstring("UpgradeFailed"))

	// Handled, and the release is Ready with its latest values deployed.
	releaseStatus(g, hr, token, metav1.ConditionTrue, "UpgradeSucceeded")
	a = accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionTrue, credv1.ReleaseReconciledReason))
	assertReadyUnaffected(t, g, a)
	g.Expect(a.Status.AppliedChange.Equal(a.Status.LastChange)).To(BeTrue())
	g.Expect(conditions.GetMessage(a, credv1.AppliedCondition)).To(
		ContainSubstring(a.Status.LastChange.UTC().Format(time.RFC3339)))

	// The next mint: a new request, and someone overwrites it before
	// helm-controller handled it; credo requests again.
	time.Sleep(1100 * time.Millisecond)
	second := mint(g, ns, "ch-app")
	a = accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool {
		return appliedIs(metav1.ConditionUnknown, credv1.ReleaseReconcilePendingReason)(a) && a.Status.AppliedRequest.Token != token
	})
	g.Expect(a.Status.AppliedChange.Before(a.Status.LastChange)).To(BeTrue())
	token = a.Status.AppliedRequest.Token
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Annotations[meta.ReconcileRequestAnnotation] = time.Now().Format(time.RFC3339Nano)
	g.Expect(env.Client.Patch(ctx, hr, patch)).To(Succeed())
	requestAccountReconcile(g, ns, "ch-app")
	a = accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool { return a.Status.AppliedRequest.Token != token })
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Annotations).To(HaveKeyWithValue(meta.ReconcileRequestAnnotation, a.Status.AppliedRequest.Token))
	g.Expect(conditions.GetReason(a, credv1.AppliedCondition)).To(Equal(credv1.ReleaseReconcilePendingReason))

	// The old token handled is not enough; the new one is.
	releaseStatus(g, hr, token, metav1.ConditionTrue, "UpgradeSucceeded")
	g.Consistently(func() string {
		return conditions.GetReason(accountWith(g, ns, "ch-app", func(*credv1.CredentialAccount) bool { return true }), credv1.AppliedCondition)
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(credv1.ReleaseReconcilePendingReason))
	releaseStatus(g, hr, a.Status.AppliedRequest.Token, metav1.ConditionTrue, "UpgradeSucceeded")
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionTrue, credv1.ReleaseReconciledReason))

	verifier := string(accountSecret(g, ns, "ch.app.account").Data[credv1.PasswordKey])
	assertNoSecretMaterial(g, ns, password, second, verifier)
}

// How the consumers' states make one condition: all True, any False,
// otherwise Unknown; none is EngineNotObserved, naming the operators whose
// CRDs were not installed at start.
func TestAppliedSummarizesItsConsumers(t *testing.T) {
	changed := metav1.NewTime(time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC))
	pending := appliedUnknown(credv1.RolePendingReason, "Cluster pg has not reported role app")
	done := appliedTrue(credv1.ReleaseReconciledReason, "HelmRelease ch reconciled with it")
	failed := appliedFalse(credv1.UserNotReadyReason, "User app is not Ready (Failed)")
	cases := map[string]struct {
		states  []consumerState
		absent  []engine.Kind
		status  metav1.ConditionStatus
		reason  string
		message []string
		applied bool
	}{
		"every consumer True is True, naming the change and each consumer": {
			states: []consumerState{done, appliedTrue(credv1.RoleReconciledReason, "Cluster pg reconciled role app with it")},
			status: metav1.ConditionTrue, reason: credv1.ReleaseReconciledReason, applied: true,
			message: []string{"2026-12-03T21:00:00Z", "HelmRelease ch", "Cluster pg"},
		},
		"one consumer False is False, whatever the others say": {
			states: []consumerState{done, pending, failed},
			status: metav1.ConditionFalse, reason: credv1.UserNotReadyReason, message: []string{"User app", "Cluster pg"},
		},
		"a pending consumer beside True ones is Unknown": {
			states: []consumerState{done, pending},
			status: metav1.ConditionUnknown, reason: credv1.RolePendingReason,
		},
		"no consumer is EngineNotObserved, naming the operators not observed": {
			absent: engine.Kinds,
			status: metav1.ConditionUnknown, reason: credv1.EngineNotObservedReason,
			message: []string{"ch.app.account", "not observed: CloudNativePG, mariadb-operator (CRD not installed"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			a := &credv1.CredentialAccount{Spec: credv1.CredentialAccountSpec{Release: "ch", Username: "app"}}
			a.Status.LastChange = &changed
			setApplied(a, c.states, c.absent)
			cond := conditions.Get(a, credv1.AppliedCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(c.status))
			g.Expect(cond.Reason).To(Equal(c.reason))
			for _, m := range c.message {
				g.Expect(cond.Message).To(ContainSubstring(m))
			}
			g.Expect(a.Status.AppliedChange != nil).To(Equal(c.applied))
		})
	}
}
