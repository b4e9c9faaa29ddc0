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
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

// The ClickHouse shape, with the real helm-controller: a release of a
// chart rendering users.xml from values, a sha256-hex account delivered
// through valuesFrom, and `kubectl credo mint`: helm-controller upgrades the
// release and users.xml carries the verifier of the returned password.
func TestMintReachesTheRunningRelease(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ns := newNamespace(t, "e2e-clickhouse-")
	installClickHouse(t, ns, "ch")
	before := renderedUsers(ns, "ch")

	st := mintWithPlugin(t, e.Kubeconfig, ns, "ch-app")
	minted := time.Now()
	verifier := sha256Hex(st.Password)
	g.Expect(before).NotTo(ContainSubstring(verifier))
	g.Eventually(func() string { return renderedUsers(ns, "ch") }, 2*time.Minute, 100*time.Millisecond).
		Should(ContainSubstring("<password_sha256_hex>"+verifier+"</password_sha256_hex>"),
			"helm-controller upgrades the release with the verifier of the minted password")
	t.Logf("mint → users.xml of the running release carries the new verifier: %s", time.Since(minted).Round(time.Millisecond))
}

// After a mint, the account's Applied condition turns True for that mint
// once the real helm-controller handled credo's reconcile request and the
// release is deployed, and never before: whenever the account says so, the
// running release (read after the account) already carries the verifier.
// The release, suspended first, shows Applied False meanwhile.
func TestMintIsReportedAppliedOnceTheReleaseCarriesIt(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-applied-")
	hr := installClickHouse(t, ns, "ch")
	key := client.ObjectKey{Namespace: ns, Name: "ch-app"}
	var acct credv1.CredentialAccount
	g.Eventually(func() string {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		return conditions.GetReason(&acct, credv1.AppliedCondition)
	}, time.Minute, 250*time.Millisecond).Should(Equal(credv1.NotIssuedReason))

	patch := client.MergeFrom(hr.DeepCopy())
	hr.Spec.Suspend = true
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	st := mintWithPlugin(t, e.Kubeconfig, ns, "ch-app")
	minted := st.MintedAt.UTC().Format(time.RFC3339)
	verifier := sha256Hex(st.Password)
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		return conditions.IsFalse(&acct, credv1.AppliedCondition) &&
			conditions.GetReason(&acct, credv1.AppliedCondition) == credv1.ReleaseReconcilePendingReason &&
			acct.Status.LastChange.UTC().Format(time.RFC3339) == minted
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "Applied is False for the mint at %s while the release is suspended: %+v %+v",
		minted, acct.Status.Conditions, acct.Status.History)
	g.Expect(acct.Status.AppliedChange).To(BeNil())
	g.Expect(conditions.GetReason(&acct, meta.ReadyCondition)).To(Equal(credv1.ReleaseSuspendedReason), "Ready says why, from DeliveryFailed")

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch = client.MergeFrom(hr.DeepCopy())
	hr.Spec.Suspend = false
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	resumed := time.Now()
	sawPending := false
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		// The conditions and the other status fields are two patches.
		applied := conditions.IsTrue(&acct, credv1.AppliedCondition) && acct.Status.AppliedChange != nil
		if !applied {
			sawPending = true
			return false
		}
		// Read after the account: the release already carries the verifier.
		g.Expect(renderedUsers(ns, "ch")).To(ContainSubstring(verifier), "Applied is True only once the release carries the verifier")
		return true
	}, 2*time.Minute, 100*time.Millisecond).Should(BeTrue(), "Applied turns True: %+v", acct.Status.Conditions)
	g.Expect(sawPending).To(BeTrue(), "Applied was not True before helm-controller handled the request")
	t.Logf("release resumed → Applied True: %s", time.Since(resumed).Round(time.Millisecond))
	g.Expect(conditions.GetReason(&acct, credv1.AppliedCondition)).To(Equal(credv1.ReleaseReconciledReason))
	g.Expect(conditions.GetMessage(&acct, credv1.AppliedCondition)).To(ContainSubstring(minted))
	g.Expect(acct.Status.AppliedChange).NotTo(BeNil())
	g.Expect(acct.Status.AppliedChange.UTC().Format(time.RFC3339)).To(Equal(minted))
	g.Expect(conditions.IsReady(&acct)).To(BeTrue())

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	g.Expect(hr.Status.LastHandledReconcileAt).To(HavePrefix("credo:"), "helm-controller handled credo's request")

	// The next mint, on the running release: True again, for that mint.
	time.Sleep(1100 * time.Millisecond) // lastChange has a resolution of one second
	st = mintWithPlugin(t, e.Kubeconfig, ns, "ch-app")
	minted, verifier = st.MintedAt.UTC().Format(time.RFC3339), sha256Hex(st.Password)
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, key, &acct)).To(Succeed())
		if !conditions.IsTrue(&acct, credv1.AppliedCondition) || acct.Status.AppliedChange == nil ||
			acct.Status.AppliedChange.UTC().Format(time.RFC3339) != minted {
			return false
		}
		g.Expect(renderedUsers(ns, "ch")).To(ContainSubstring(verifier), "Applied is True only once the release carries the verifier")
		return true
	}, 2*time.Minute, 100*time.Millisecond).Should(BeTrue(), "Applied turns True for the second mint: %+v", acct.Status.Conditions)
}

// A suspended release is reported (a ReleaseSuspended Warning on the
// account and on its HelmRelease, DeliveryFailed on the account) and not
// upgraded; resumed, it gets the minted password's verifier.
func TestSuspendedReleaseIsReportedAndNotUpgraded(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-suspended-")
	hr := installClickHouse(t, ns, "ch")
	before := renderedUsers(ns, "ch")

	patch := client.MergeFrom(hr.DeepCopy())
	hr.Spec.Suspend = true
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	st := mintWithPlugin(t, e.Kubeconfig, ns, "ch-app")
	verifier := sha256Hex(st.Password)

	for _, kind := range []string{credv1.CredentialAccountKind, helmv2.HelmReleaseKind} {
		name := map[string]string{credv1.CredentialAccountKind: "ch-app", helmv2.HelmReleaseKind: "ch"}[kind]
		g.Eventually(func() bool { return hasWarning(ctx, ns, kind, name, credv1.ReleaseSuspendedReason) }, time.Minute, 250*time.Millisecond).
			Should(BeTrue(), "a ReleaseSuspended Warning on %s %s", kind, name)
	}
	var acct credv1.CredentialAccount
	g.Eventually(func() string {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ch-app"}, &acct)).To(Succeed())
		return conditions.GetReason(&acct, credv1.DeliveryFailedCondition)
	}, time.Minute, 250*time.Millisecond).Should(Equal(credv1.ReleaseSuspendedReason))
	g.Consistently(func() string { return renderedUsers(ns, "ch") }, 10*time.Second, 500*time.Millisecond).
		Should(Equal(before), "a suspended release is not upgraded")

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
	patch = client.MergeFrom(hr.DeepCopy())
	hr.Spec.Suspend = false
	g.Expect(k8s.Patch(ctx, hr, patch)).To(Succeed())
	g.Eventually(func() string { return renderedUsers(ns, "ch") }, 2*time.Minute, 250*time.Millisecond).
		Should(ContainSubstring(verifier), "resumed, the release gets the minted password's verifier")
}

// installClickHouse serves the chart clickhouse-mini as an ExternalArtifact
// and installs release from it with a sha256-hex account <release>-app
// delivered at users.app.password_sha256_hex, and waits until
// helm-controller has rendered the account's first (NotIssued) verifier.
func installClickHouse(t testing.TB, ns, release string) *helmv2.HelmRelease {
	return installClickHouseWith(t, ns, release, clickHouse{})
}

// clickHouse is how installClickHouseWith installs a release.
type clickHouse struct {
	// user is the account's username, default app; the account is
	// <release>-<user>, delivered at users.<user>.password_sha256_hex.
	user string
	// owner of the account, default tenant.
	owner credv1.AccountOwner
	// labels of the HelmRelease.
	labels map[string]string
	// valuesFrom of the HelmRelease as created (as Git would give it).
	valuesFrom []helmv2.ValuesReference
}

// installClickHouseWith is installClickHouse as o says.
func installClickHouseWith(t testing.TB, ns, release string, o clickHouse) *helmv2.HelmRelease {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	if o.user == "" {
		o.user = "app"
	}
	ea := newExternalArtifact(t, ns, "clickhouse-mini")

	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns, Labels: o.labels},
		Spec: helmv2.HelmReleaseSpec{
			Interval:   metav1.Duration{Duration: time.Hour},
			ChartRef:   &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: ea.Name, Namespace: ns},
			ValuesFrom: o.valuesFrom,
		},
	}
	g.Expect(k8s.Create(ctx, hr)).To(Succeed())
	account := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-" + o.user, Namespace: ns},
		Spec: credv1.CredentialAccountSpec{
			Release: release, Username: o.user, Format: credv1.Format{Name: "sha256-hex"}, Owner: o.owner,
			ValuesFrom: &credv1.ValuesFromTarget{TargetPath: "users." + o.user + ".password_sha256_hex"},
		},
	}
	g.Expect(k8s.Create(ctx, account)).To(Succeed())
	if o.valuesFrom == nil {
		waitAccountReady(t, ns, account.Name)
	} // else Git gave the release its entries: the account may rightly not be Ready.
	// Three minutes: on a loaded machine, in the full suite, helm-controller
	// once took more than two to start on a new release.
	g.Eventually(func() string { return renderedUsers(ns, release) }, 3*time.Minute, 250*time.Millisecond).
		Should(MatchRegexp(`<`+o.user+`>\s*<password_sha256_hex>[0-9a-f]{64}</password_sha256_hex>`),
			"helm-controller renders the account's first verifier; HelmRelease: %+v\nhelm-controller's log, last lines:\n%s",
			releaseConditions(ns, release), helmControllerLogTail(40))
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		return conditions.IsReady(hr)
	}, time.Minute, 250*time.Millisecond).Should(BeTrue())
	return hr
}

// newExternalArtifact serves testdata/charts/<chart> (serveChart) as the
// Ready ExternalArtifact <chart> of ns, which a HelmRelease's chartRef
// names.
func newExternalArtifact(t testing.TB, ns, chart string) *sourcev1.ExternalArtifact {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	artifact := serveChart(t, chart)
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: chart, Namespace: ns}}
	g.Expect(k8s.Create(ctx, ea)).To(Succeed())
	ea.Status.Artifact = artifact
	conditions.MarkTrue(ea, meta.ReadyCondition, meta.SucceededReason, "served by the e2e suite")
	g.Expect(k8s.Status().Update(ctx, ea)).To(Succeed())
	return ea
}

// renderedUsers is the users.xml the release's chart rendered, "" before.
func renderedUsers(ns, release string) string {
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release + "-users"}, &cm); err != nil {
		return ""
	}
	return cm.Data["users.xml"]
}

// helmControllerLogTail is the end of the local helm-controller's log, for
// failures; "" against E2E_KUBECONFIG.
func helmControllerLogTail(lines int) string {
	if dev == nil || dev.Flux == nil {
		return ""
	}
	c, ok := dev.Flux.Controllers[controlplane.HelmController]
	if !ok || c.Process == nil {
		return ""
	}
	b, err := os.ReadFile(c.Process.LogPath())
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// releaseConditions are the conditions of the HelmRelease, for failures.
func releaseConditions(ns, name string) []metav1.Condition {
	var hr helmv2.HelmRelease
	_ = k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &hr)
	return hr.Status.Conditions
}

// hasWarning reports whether a Warning of reason is recorded on the object.
func hasWarning(ctx context.Context, ns, kind, name, reason string) bool {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return false
	}
	for _, e := range events.Items {
		if e.Type == corev1.EventTypeWarning && e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			return true
		}
	}
	return false
}

// sha256Hex is the verifier of credo's sha256-hex format, ClickHouse's
// password_sha256_hex.
func sha256Hex(password string) string {
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:])
}
