//go:build e2e

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

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

// The tenant's chosen password for the platform's ClickHouse root, and
// the ConfigMap holding its sha256 (what a tenant would put in valuesFrom).
const (
	tenantPassword  = "the-tenant-chose-this-one"
	tenantConfigMap = "mine"
	rootPath        = "users.root.password_sha256_hex"
)

// installPlatformRoot installs the ClickHouse chart with a platform
// account root delivered through valuesFrom, and waits until credo has
// labelled the release as delivering a platform account.
func installPlatformRoot(t *testing.T, ns string, o clickHouse) *helmv2.HelmRelease {
	t.Helper()
	o.user, o.owner = "root", credv1.OwnerPlatform
	hr := installClickHouseWith(t, ns, "ch", o)
	NewWithT(t).Eventually(func() string {
		_ = k8s.Get(context.Background(), client.ObjectKeyFromObject(hr), hr)
		return hr.Labels[credv1.PlatformValuesLabel]
	}, time.Minute, 250*time.Millisecond).Should(Equal("true"))
	return hr
}

// tenantEntry is a valuesFrom entry of the tenant's ConfigMap at the root
// account's path.
func tenantEntry() helmv2.ValuesReference {
	return helmv2.ValuesReference{Kind: "ConfigMap", Name: tenantConfigMap, ValuesKey: "hash", TargetPath: rootPath}
}

// createTenantConfigMap creates, with c, the ConfigMap of tenantEntry.
func createTenantConfigMap(t *testing.T, c client.Client, ns string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tenantConfigMap, Namespace: ns}, Data: map[string]string{"hash": sha256Hex(tenantPassword)}}
	NewWithT(t).Expect(c.Create(context.Background(), cm)).To(Succeed())
}

// rootVerifier is the verifier the root account's Secret holds.
func rootVerifier(t *testing.T, ns string) string {
	t.Helper()
	var s corev1.Secret
	NewWithT(t).Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ch.root.account"}, &s)).To(Succeed())
	return string(s.Data[credv1.PasswordKey])
}

// rendersRoot reports whether the rendered users.xml gives root the
// verifier v (compared here, never printed).
func rendersRoot(ns, v string) bool {
	return strings.Contains(renderedUsers(ns, "ch"), "<password_sha256_hex>"+v+"</password_sha256_hex>")
}

// A tenant bound to edit (with Flux's flux-edit aggregated into it, as a
// platform that grants Flux's roles has it) may write its HelmReleases'
// spec and status. On a release that delivers a platform account, the
// default install's credo-platform-releases policy refuses each way it
// could make the chart render a root password it chose: its own entry at
// the account's path, credo's entry removed, a post-renderer, another
// chart, the label dropped, a forged status. What stays its own (the
// values, even at the account's path) never wins over credo's entry.
// (docs/security.md, "What each tenant reaches": flux-edit.)
func TestAFluxEditTenantCannotSetThePlatformRootPassword(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-seal-")
	hr := installPlatformRoot(t, ns, clickHouse{})
	_, cfg, err := e.Tenant(ctx, "mallory", ns, "edit")
	g.Expect(err).NotTo(HaveOccurred())
	tenant, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	createTenantConfigMap(t, tenant, ns)

	refused := func(what string, mutate func(*helmv2.HelmRelease), status bool) {
		t.Helper()
		cur := &helmv2.HelmRelease{}
		g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(hr), cur)).To(Succeed(), "the tenant reads its release")
		patch := client.MergeFrom(cur.DeepCopy())
		mutate(cur)
		if status {
			err = tenant.Status().Patch(ctx, cur, patch)
		} else {
			err = tenant.Patch(ctx, cur, patch)
		}
		g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%s: refused, got %v", what, err)
		g.Expect(err.Error()).To(ContainSubstring(credv1.PlatformValuesLabel), "%s: the refusal says why", what)
	}
	refused("its own entry first at the account's path", func(hr *helmv2.HelmRelease) {
		hr.Spec.ValuesFrom = append([]helmv2.ValuesReference{tenantEntry()}, hr.Spec.ValuesFrom...)
	}, false)
	refused("credo's entry removed", func(hr *helmv2.HelmRelease) { hr.Spec.ValuesFrom = nil }, false)
	refused("a post-renderer", func(hr *helmv2.HelmRelease) {
		hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{Patch: "[]", Target: &kustomize.Selector{Kind: "ConfigMap"}}}}}}
	}, false)
	refused("another chart", func(hr *helmv2.HelmRelease) { hr.Spec.ChartRef.Name = "a-chart-of-mine" }, false)
	refused("the label dropped", func(hr *helmv2.HelmRelease) { delete(hr.Labels, credv1.PlatformValuesLabel) }, false)
	refused("a forged status", func(hr *helmv2.HelmRelease) {
		hr.Status.LastHandledReconcileAt = "credo:2099-01-01T00:00:00Z"
	}, true)

	// Its values are its own: even at the account's path they lose to
	// credo's entry, which stays first.
	cur := &helmv2.HelmRelease{}
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(hr), cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"root":{"password_sha256_hex":"` + sha256Hex(tenantPassword) + `"}}}`)}
	g.Expect(tenant.Patch(ctx, cur, patch)).To(Succeed(), "the tenant may write its release's values")
	// helm-controller upgrades the release with the tenant's values (in
	// the full suite it was seen not to within two minutes: what it
	// renders is checked either way).
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), cur)).To(Succeed())
		if latest := cur.Status.History.Latest(); cur.Status.ObservedGeneration == cur.Generation && conditions.IsReady(cur) && latest != nil && latest.Version >= 2 {
			break
		}
	}
	g.Expect(rendersRoot(ns, sha256Hex(tenantPassword))).To(BeFalse(), "the tenant's hash is not deployed")
	g.Expect(rendersRoot(ns, rootVerifier(t, ns))).To(BeTrue(), "the platform's verifier is")
}

// A writer the policy admits (an administrator, the platform's GitOps)
// who puts another entry at the account's path first, or adds a
// post-renderer, gets it reported: credo puts its entry back first, drops
// the other, and records ValuesShadowed on the account and the release; a
// post-renderer keeps the account DeliveryFailed and not Applied.
func TestShadowedPlatformValuesAreRestoredAndReported(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-shadow-")
	hr := installPlatformRoot(t, ns, clickHouse{})
	createTenantConfigMap(t, k8s, ns)
	want := hr.Spec.ValuesFrom[0]

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Spec.ValuesFrom = append([]helmv2.ValuesReference{tenantEntry()}, hr.Spec.ValuesFrom...)
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	g.Eventually(func() []helmv2.ValuesReference {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		return hr.Spec.ValuesFrom
	}, time.Minute, 100*time.Millisecond).Should(Equal([]helmv2.ValuesReference{want}), "credo's entry first, the other at its path gone")
	for _, o := range []struct{ kind, name string }{{credv1.CredentialAccountKind, "ch-root"}, {helmv2.HelmReleaseKind, "ch"}} {
		g.Eventually(func() bool { return hasWarning(ctx, ns, o.kind, o.name, credv1.ValuesShadowedReason) }, time.Minute, 250*time.Millisecond).
			Should(BeTrue(), "a ValuesShadowed Warning on %s %s", o.kind, o.name)
	}
	g.Eventually(func() bool { return rendersRoot(ns, rootVerifier(t, ns)) }, 2*time.Minute, 250*time.Millisecond).Should(BeTrue())
	g.Expect(rendersRoot(ns, sha256Hex(tenantPassword))).To(BeFalse())

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch = client.MergeFrom(hr.DeepCopy())
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{
		Patch: `[{"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}]`, Target: &kustomize.Selector{Kind: "ConfigMap"},
	}}}}}
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	var acct credv1.CredentialAccount
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch-root"}, &acct)).To(Succeed())
		return conditions.GetReason(&acct, credv1.DeliveryFailedCondition) == credv1.ValuesShadowedReason &&
			conditions.IsFalse(&acct, credv1.AppliedCondition) && conditions.GetReason(&acct, credv1.AppliedCondition) == credv1.ValuesShadowedReason
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "a post-renderer: DeliveryFailed and Applied False ValuesShadowed: %+v", acct.Status.Conditions)
	g.Expect(conditions.IsReady(&acct)).To(BeFalse())
}

// A release applied from Git is not edited by credo. When Git puts another
// entry first at a platform account's path, helm-controller deploys that
// entry's value (the first wins when spec.values has the account's map):
// credo reads what Helm recorded as deployed and reports the account
// Applied False ValuesShadowed with a Warning, never ReleaseReconciled.
func TestValuesShadowedInGitAreNeverReportedApplied(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-gitshadow-")
	createTenantConfigMap(t, k8s, ns)
	credo := helmv2.ValuesReference{Kind: "Secret", Name: "ch.root.account", ValuesKey: credv1.PasswordKey, TargetPath: rootPath}
	o := clickHouse{labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps"}, valuesFrom: []helmv2.ValuesReference{tenantEntry(), credo}}
	o.user, o.owner = "root", credv1.OwnerPlatform
	hr := installClickHouseWith(t, ns, "ch", o)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"root":{"password_sha256_hex":"0"}}}`)}
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	g.Eventually(func() bool { return rendersRoot(ns, sha256Hex(tenantPassword)) }, 2*time.Minute, 250*time.Millisecond).
		Should(BeTrue(), "helm-controller deploys the entry Git put first")

	var acct credv1.CredentialAccount
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch-root"}, &acct)).To(Succeed())
		return conditions.IsFalse(&acct, credv1.AppliedCondition) && conditions.GetReason(&acct, credv1.AppliedCondition) == credv1.ValuesShadowedReason
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "Applied False ValuesShadowed: %+v", acct.Status.Conditions)
	g.Expect(conditions.GetReason(&acct, credv1.DeliveryFailedCondition)).To(Equal(credv1.ValuesShadowedReason), "Git is told what to change")
	g.Consistently(func() string {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch-root"}, &acct)).To(Succeed())
		return conditions.GetReason(&acct, credv1.AppliedCondition)
	}, 5*time.Second, 250*time.Millisecond).Should(Equal(credv1.ValuesShadowedReason))
	for _, o := range []struct{ kind, name string }{{credv1.CredentialAccountKind, "ch-root"}, {helmv2.HelmReleaseKind, "ch"}} {
		g.Expect(hasWarning(ctx, ns, o.kind, o.name, credv1.ValuesShadowedReason)).To(BeTrue(), "a ValuesShadowed Warning on %s %s", o.kind, o.name)
	}
}

// A status written by someone other than helm-controller (here an
// administrator, whom the policy admits; a tenant is refused above) saying
// credo's reconcile request was handled and a new version deployed never
// makes a platform account Applied: credo reads Helm's record of that
// version, and there is none. helm-controller is paused meanwhile, so that
// only the forged status speaks; resumed, it deploys the rotated verifier
// and the account is Applied.
func TestAForgedReleaseStatusNeverMakesAPlatformAccountApplied(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-forged-")
	hr := installPlatformRoot(t, ns, clickHouse{})
	key := client.ObjectKey{Namespace: ns, Name: "ch-root"}
	var acct credv1.CredentialAccount
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		return conditions.IsTrue(&acct, credv1.AppliedCondition)
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "the first password is Applied: %+v", acct.Status.Conditions)

	helm := e.Flux.Controllers[controlplane.HelmController].Process
	g.Expect(helm.Pause()).To(Succeed())
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			g.Expect(helm.Resume()).To(Succeed())
		}
	}
	t.Cleanup(resume)
	patch := client.MergeFrom(acct.DeepCopy())
	acct.Spec.Rotate = "forged-status-test"
	g.Expect(k8s.Patch(ctx, &acct, patch)).To(Succeed())
	var s corev1.Secret
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch.root.account"}, &s)).To(Succeed())
		return acct.Status.LastHandledRotate == "forged-status-test" && acct.Status.AppliedRequest != nil &&
			acct.Status.AppliedRequest.SecretResourceVersion == s.ResourceVersion
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "rotated, a reconcile requested: %+v", acct.Status)
	token := acct.Status.AppliedRequest.Token

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	latest := hr.Status.History.Latest().DeepCopy()
	latest.Version += 10
	latest.LastDeployed = metav1.Now()
	hr.Status.History = append(helmv2.Snapshots{latest}, hr.Status.History...)
	hr.Status.LastAttemptedConfigDigest = latest.ConfigDigest
	hr.Status.LastHandledReconcileAt = token
	hr.Status.ObservedGeneration = hr.Generation
	conditions.MarkTrue(hr, meta.ReadyCondition, "UpgradeSucceeded", "Helm upgrade succeeded")
	g.Expect(k8s.Status().Update(ctx, hr)).To(Succeed())
	requestAccountReconcile(g, ns, "ch-root")
	g.Consistently(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		return conditions.IsTrue(&acct, credv1.AppliedCondition)
	}, 5*time.Second, 250*time.Millisecond).Should(BeFalse(), "a forged status makes nothing Applied: %+v", acct.Status.Conditions)

	resume()
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		return conditions.IsTrue(&acct, credv1.AppliedCondition)
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "helm-controller deploys the rotated verifier: %+v", acct.Status.Conditions)
	g.Expect(rendersRoot(ns, rootVerifier(t, ns))).To(BeTrue())
}

// requestAccountReconcile asks the credential-controller to reconcile the
// account now.
func requestAccountReconcile(g Gomega, ns, name string) {
	var acct credv1.CredentialAccount
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &acct)).To(Succeed())
	patch := client.MergeFrom(acct.DeepCopy())
	if acct.Annotations == nil {
		acct.Annotations = map[string]string{}
	}
	acct.Annotations[meta.ReconcileRequestAnnotation] = time.Now().Format(time.RFC3339Nano)
	g.Expect(k8s.Patch(context.Background(), &acct, patch)).To(Succeed())
}
