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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// A tenant may write its release's reconcile.fluxcd.io/requestedAt, and
// helm-controller copies whatever it handled into lastHandledReconcileAt: a
// "credo:" token far in the future that the tenant set and helm-controller
// handled before the mint never makes the mint Applied. Only the tokens
// credo issued (recorded in the accounts' status) count.
func TestAForgedReconcileTokenNeverMakesAMintApplied(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionUnknown, credv1.NotIssuedReason))

	const forged = "credo:2099-01-01T00:00:00Z"
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Annotations = map[string]string{meta.ReconcileRequestAnnotation: forged}
	g.Expect(env.Client.Patch(ctx, hr, patch)).To(Succeed())
	releaseStatus(g, hr, forged, metav1.ConditionTrue, "UpgradeSucceeded")

	mint(g, ns, "ch-app")
	s := accountSecret(g, ns, "ch.app.account")
	a := accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool {
		return a.Status.AppliedRequest != nil && a.Status.AppliedRequest.SecretResourceVersion == s.ResourceVersion
	})
	token := a.Status.AppliedRequest.Token
	g.Expect(token).NotTo(Equal(forged))
	requestAccountReconcile(g, ns, "ch-app")
	g.Consistently(func() string {
		return conditions.GetReason(accountWith(g, ns, "ch-app", func(*credv1.CredentialAccount) bool { return true }), credv1.AppliedCondition)
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(credv1.ReleaseReconcilePendingReason), "the forged token covers nothing")

	releaseStatus(g, hr, token, metav1.ConditionTrue, "UpgradeSucceeded")
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionTrue, credv1.ReleaseReconciledReason))
}

// An account delivered through valuesFrom whose release is applied from
// Git without the entry (ManagedByGitOps) is not Applied, whatever
// helm-controller reports: the engine never reads the Secret.
func TestAppliedIsFalseWhileTheReleaseLacksTheValuesFromEntry(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "ch", "clickhouse", map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps"})
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", accountReason(credv1.DeliveryFailedCondition, credv1.ManagedByGitOpsReason))
	mint(g, ns, "ch-app")
	// helm-controller's status of a successful reconcile (retried: the
	// release may be written meanwhile).
	g.Eventually(func(g Gomega) {
		releaseStatus(g, hr, "", metav1.ConditionTrue, "UpgradeSucceeded")
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	requestAccountReconcile(g, ns, "ch-app")
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionFalse, credv1.ValuesNotDeliveredReason))
}

// Whoever may write a release's status (flux-edit) may name any storage
// namespace in it: credo reads Helm's record only where the release's spec
// keeps it, so a record in another namespace that holds the minted value
// never makes the mint Applied (nor tells its writer whether that
// namespace holds such a Secret).
func TestAForgedStorageNamespaceIsNotWhereTheRecordIsRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, decoy := env.NewNamespace(t), env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	newAccount(t, ns, "ch-app", "ch", "app", "sha256-hex", func(a *credv1.CredentialAccount) {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"}
	})
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionUnknown, credv1.NotIssuedReason))
	mint(g, ns, "ch-app")
	s := accountSecret(g, ns, "ch.app.account")
	a := accountWith(g, ns, "ch-app", func(a *credv1.CredentialAccount) bool {
		return a.Status.AppliedRequest != nil && a.Status.AppliedRequest.SecretResourceVersion == s.ResourceVersion
	})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	// The chart deployed without the value where the spec keeps its
	// records; the decoy namespace holds a record with it.
	writeHelmRecord(g, ns, hr.Name, 2, map[string]any{})
	writeHelmRecord(g, decoy, hr.Name, 2, deployedConfig(g, hr))
	now := metav1.Now()
	hr.Status.ObservedGeneration = hr.Generation
	hr.Status.LastHandledReconcileAt = a.Status.AppliedRequest.Token
	hr.Status.LastAttemptedConfigDigest = "sha256:2f1c"
	hr.Status.StorageNamespace = decoy
	hr.Status.History = helmv2.Snapshots{{Name: hr.Name, Namespace: hr.Namespace, Version: 2, Status: "deployed",
		ChartName: "clickhouse", ChartVersion: "1.0.0", ConfigDigest: "sha256:2f1c", FirstDeployed: now, LastDeployed: now}}
	conditions.MarkTrue(hr, meta.ReadyCondition, "UpgradeSucceeded", "Helm upgrade succeeded")
	g.Expect(env.Client.Status().Update(ctx, hr)).To(Succeed())
	requestAccountReconcile(g, ns, "ch-app")
	accountWith(g, ns, "ch-app", appliedIs(metav1.ConditionFalse, credv1.ValuesShadowedReason))
	g.Consistently(func() bool {
		return conditions.IsTrue(accountWith(g, ns, "ch-app", func(*credv1.CredentialAccount) bool { return true }), credv1.AppliedCondition)
	}, 3*time.Second, 200*time.Millisecond).Should(BeFalse(), "the decoy namespace's record made the mint Applied")
}
