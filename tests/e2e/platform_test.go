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
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/tenantprojection"
	"github.com/credo-dev/credo/tests/devenv"
	"github.com/credo-dev/credo/tests/platform"
	"github.com/credo-dev/credo/tests/testpki"
)

// A release shaped as the platform makes it, with stand-ins of the
// platform's two controllers credo meets running beside credo (its
// TenantProjection controller and the writer of spec.valuesFrom), the
// real helm-controller installing it: the projection is made once, by the
// platform, and neither side writes over the other; the ClickHouse
// verifier reaches the engine through the platform's own valuesFrom list;
// credo takes the projection over in place once switched, and hands it
// back, the Secret's UID and bytes unchanged.
func TestAPlatformShapedReleaseBesideThePlatformsControllers(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, "e2e-platform-")
	const release = "clickhouse-main"

	// The platform's chart source, named as its PackageSource reconciler
	// names ExternalArtifacts, and its values Secret, which turns the
	// chart's sentinel on.
	artifact := serveChart(t, "clickhouse-mini")
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: "cozystack-clickhouse-application-default-clickhouse", Namespace: ns}}
	g.Expect(k8s.Create(ctx, ea)).To(Succeed())
	ea.Status.Artifact = artifact
	conditions.MarkTrue(ea, meta.ReadyCondition, meta.SucceededReason, "served by the e2e suite")
	g.Expect(k8s.Status().Update(ctx, ea)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cozystack-values", Namespace: ns},
		StringData: map[string]string{"values.yaml": "tenantCA: true\n"}})).To(Succeed())
	// The engine operator's key-bearing CA.
	cert, key := testpki.CA(t, "clickhouse-ca")
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: release + "-ca", Namespace: ns},
		Data: map[string][]byte{"ca.crt": cert, "ca.key": key}})).To(Succeed())

	// The platform's controllers: the definition lists the account's entry.
	projector := &platform.TenantProjectionController{Client: k8s, Namespace: ns}
	pctx, stopProjector := context.WithCancel(ctx)
	projectorDone := make(chan struct{})
	go func() { projector.Run(pctx); close(projectorDone) }()
	entry := helmv2.ValuesReference{Kind: "Secret", Name: credv1.AccountSecretName(release, "app"),
		ValuesKey: credv1.PasswordKey, TargetPath: "users.app.password_sha256_hex"}
	list := []helmv2.ValuesReference{{Kind: "Secret", Name: "cozystack-values"}, entry}
	writer, err := platform.StartValuesFromWriter(restConfig, k8s.Scheme(), client.ObjectKey{Namespace: ns, Name: release}, list)
	g.Expect(err).NotTo(HaveOccurred())
	defer writer.Stop()

	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns, Labels: map[string]string{
			"apps.cozystack.io/application.group": "apps.cozystack.io",
			"apps.cozystack.io/application.kind":  "ClickHouse",
			"apps.cozystack.io/application.name":  "main",
		}},
		Spec: helmv2.HelmReleaseSpec{
			Interval:   metav1.Duration{Duration: time.Hour},
			ChartRef:   &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: ea.Name, Namespace: ns},
			ValuesFrom: list,
		},
	}
	g.Expect(k8s.Create(ctx, hr)).To(Succeed())
	account := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-app", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{
			Release: release, Username: "app", Format: credv1.Format{Name: "sha256-hex"},
			ValuesFrom: &credv1.ValuesFromTarget{TargetPath: entry.TargetPath},
		},
	}
	g.Expect(k8s.Create(ctx, account)).To(Succeed())

	// The verifier reaches users.xml through the platform's list.
	verifierRendered := func() bool {
		var s corev1.Secret
		if k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: entry.Name}, &s) != nil || len(s.Data[credv1.PasswordKey]) == 0 {
			return false
		}
		return strings.Contains(renderedUsers(ns, release), string(s.Data[credv1.PasswordKey]))
	}
	g.Eventually(verifierRendered, 3*time.Minute, 250*time.Millisecond).Should(BeTrue(),
		"helm-controller renders the account's verifier from the platform's list; HelmRelease: %+v", releaseConditions(ns, release))

	// The projection is the platform's, made once; credo records it.
	var ta trustv1.TrustAnchor
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: release}, &ta) == nil &&
			conditions.IsReady(&ta) && conditions.IsTrue(&ta, trustv1.ProjectedByPlatformCondition)
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "the TrustAnchor records the platform's projection: %+v", ta.Status.Conditions)
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegTenantProjection))
	var before corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + ".tenant-ca"}, &before)).To(Succeed())
	writes := writer.Writes()
	g.Consistently(func(g Gomega) {
		var p corev1.Secret
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&before), &p)).To(Succeed())
		g.Expect(fieldowner.Wrote(&p, fieldowner.TrustController)).To(BeFalse(), "credo wrote the platform's projection")
		creates, _, collisions := projector.Counts()
		g.Expect(creates).To(Equal(1))
		g.Expect(collisions).To(BeZero())
		g.Expect(writer.Writes()).To(Equal(writes), "the platform's writer had to restore its list")
	}, 3*time.Second, 250*time.Millisecond).Should(Succeed())

	// A mint reaches the engine through the same list.
	st := mintWithPlugin(t, e.Kubeconfig, ns, account.Name)
	g.Eventually(func() bool {
		return strings.Contains(renderedUsers(ns, release), sha256Hex(st.Password))
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "the minted password's verifier is rendered")
	g.Eventually(func() bool {
		var acct credv1.CredentialAccount
		return k8s.Get(ctx, client.ObjectKeyFromObject(account), &acct) == nil && conditions.IsTrue(&acct, credv1.AppliedCondition)
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "the account is Applied")
	g.Expect(writer.Writes()).To(Equal(writes), "the platform's writer never had to restore its list")
	g.Expect(writer.ManagerWroteValuesFrom(fieldowner.CredentialController)).To(BeFalse(), "credo never wrote spec.valuesFrom")
	g.Expect(writer.OnlyLists(list)).To(BeTrue(), "the list was only ever the platform's")

	// The handover: the platform's controller stopped, credo switched.
	stopProjector()
	<-projectorDone
	restartTrustController(t, e, "--tenant-projections=credo")
	requestAnchorReconcile(g, ns, release)
	var after corev1.Secret
	g.Eventually(func() []metav1.OwnerReference {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&before), &after)).To(Succeed())
		return after.OwnerReferences
	}, time.Minute, 250*time.Millisecond).Should(ConsistOf(HaveField("UID", hr.UID)), "credo took the projection over")
	g.Expect(after.UID).To(Equal(before.UID))
	g.Expect(after.Data).To(Equal(before.Data))

	// And back: credo switched to platform hands it to the sentinel, and
	// the platform's controller, started again, keeps it as its own.
	restartTrustController(t, e)
	requestAnchorReconcile(g, ns, release)
	var sentinel = tenantprojection.New()
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-ca"}, sentinel)).To(Succeed())
	g.Eventually(func() []metav1.OwnerReference {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&before), &after)).To(Succeed())
		return after.OwnerReferences
	}, time.Minute, 250*time.Millisecond).Should(ConsistOf(HaveField("UID", types.UID(sentinel.GetUID()))), "credo handed the projection back")
	again := &platform.TenantProjectionController{Client: k8s, Namespace: ns}
	go again.Run(ctx)
	g.Eventually(func() map[string]string {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&before), &after)).To(Succeed())
		return after.Labels
	}, 30*time.Second, 250*time.Millisecond).Should(HaveKeyWithValue(tenantprojection.CopyLabel, "true"))
	g.Expect(after.UID).To(Equal(before.UID))
	g.Expect(after.Data).To(Equal(before.Data))
	creates, _, collisions := again.Counts()
	g.Expect(creates).To(BeZero())
	g.Expect(collisions).To(BeZero())
}

// restartTrustController restarts the local trust-controller with args
// (none: its defaults), and with its defaults again when the test ends.
func restartTrustController(t *testing.T, e *devenv.Environment, args ...string) {
	t.Helper()
	restartControllerWith(t, e, "trust-controller", args...)
}

// restartControllerWith restarts the named local controller with args
// (none: its defaults), and with its defaults again when the test ends.
func restartControllerWith(t *testing.T, e *devenv.Environment, name string, args ...string) {
	t.Helper()
	if e.ExtraArgs == nil {
		e.ExtraArgs = map[string][]string{}
	}
	e.ExtraArgs[name] = args
	if err := e.RestartController(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	if len(args) > 0 {
		t.Cleanup(func() {
			if len(e.ExtraArgs[name]) > 0 {
				e.ExtraArgs[name] = nil
				_ = e.RestartController(context.Background(), name)
			}
		})
	}
}

// requestAnchorReconcile asks for a reconcile of the release's TrustAnchor.
func requestAnchorReconcile(g Gomega, ns, release string) {
	var ta trustv1.TrustAnchor
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta)).To(Succeed())
	patch := client.MergeFrom(ta.DeepCopy())
	metav1.SetMetaDataAnnotation(&ta.ObjectMeta, meta.ReconcileRequestAnnotation, time.Now().Format(time.RFC3339Nano))
	g.Expect(k8s.Patch(context.Background(), &ta, patch)).To(Succeed())
}
