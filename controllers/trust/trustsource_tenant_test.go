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

package trust

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// Tests of what a tenant can do to a platform rule: opt its releases in
// (labels, chart names and chartRefs are its to write) but not make the
// rule not Ready, nor put its text in the rule's status.

// statusNamesNone fails g when the status of ts holds any of texts.
func statusNamesNone(g Gomega, ts *trustv1.TrustSource, texts ...string) {
	raw, err := json.Marshal(ts.Status)
	g.Expect(err).NotTo(HaveOccurred())
	for _, text := range texts {
		g.Expect(string(raw)).NotTo(ContainSubstring(text), "the status of cluster-scoped TrustSource %s holds a tenant's text", ts.Name)
	}
}

// notApplied waits until the rule's ReleasesNotApplied has reason.
func notApplied(g Gomega, ts *trustv1.TrustSource, reason string) *trustv1.TrustSource {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ts), ts)).To(Succeed())
		g.Expect(conditions.IsTrue(ts, trustv1.ReleasesNotAppliedCondition)).To(BeTrue())
		g.Expect(conditions.GetReason(ts, trustv1.ReleasesNotAppliedCondition)).To(Equal(reason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return ts
}

// A chartRef rule without a namespace names the platform's source: a
// tenant's own source of that name (an ExternalArtifact's name is taken
// without reading it) does not reach it; a tenant's cross-namespace
// reference to the platform's source does, as the platform's own
// application releases make.
func TestATenantsOwnSourceDoesNotReachAChartRefRuleWithoutANamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	artifact := "cozy-postgres-" + ns
	ts := newRule(t, ns, trustv1.TrustSourceSpec{ChartRef: &releasev1.ChartRef{Kind: releasev1.ExternalArtifactKind, Name: artifact}})

	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "own",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.ExternalArtifactKind, Name: artifact}, nil, ""))).To(Succeed())
	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "elsewhere",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.ExternalArtifactKind, Name: artifact, Namespace: env.NewNamespace(t)}, nil, ""))).To(Succeed())
	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "platform",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.ExternalArtifactKind, Name: artifact, Namespace: testSourceNamespace}, nil, ""))).To(Succeed())
	for _, rel := range []string{"own", "elsewhere", "platform"} {
		cert, _ := testpki.CA(t, rel+"-ca")
		env.NewSecret(t, ns, rel+"-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	}

	g.Expect(projectionOf(g, ns, "platform").Data).To(HaveKey("ca.crt"))
	ruleMatches(g, ts, 1)
	g.Consistently(func() bool {
		own := apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "own"}, &trustv1.TrustAnchor{}))
		other := apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "elsewhere"}, &trustv1.TrustAnchor{}))
		return own && other
	}, 3*time.Second, 200*time.Millisecond).Should(BeTrue(), "a source outside the platform's source namespaces is not the rule's")
}

// A tenant whose chartRef names a source that cannot be read (its own
// HelmChart, not created) leaves a chart rule Ready: its release is told,
// by a Warning on the HelmRelease; the rule counts it in ReleasesNotApplied
// and names neither the release nor its namespace.
func TestATenantsUnresolvedChartIsToldToItsReleaseAndLeavesTheRuleReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	repo := "postgres-" + ns
	env.NewOCIRepository(t, testSourceNamespace, repo, "oci://ghcr.io/cozystack/charts/postgres")
	ts := newRule(t, ns, trustv1.TrustSourceSpec{Chart: "postgres"})
	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "db",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.OCIRepositoryKind, Name: repo, Namespace: testSourceNamespace}, nil, ""))).To(Succeed())
	cert, _ := testpki.CA(t, "db-ca")
	env.NewSecret(t, ns, "db-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	g.Expect(projectionOf(g, ns, "db").Data).To(HaveKey("ca.crt"))
	ruleMatches(g, ts, 1)

	broken := testenv.TenantRelease(ns, "tenant-chosen-name",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.HelmChartKind, Name: "never-made"}, nil, "")
	g.Expect(tenant.Create(ctx, broken)).To(Succeed())

	ev := env.ReleaseWarning(g, broken, trustv1.ChartUnresolvedReason)
	g.Expect(ev.Message).To(And(ContainSubstring("HelmChart "+ns+"/never-made"), ContainSubstring("TrustSource "+ts.Name)))
	ts = notApplied(g, ts, trustv1.ChartUnresolvedReason)
	g.Expect(conditions.GetMessage(ts, trustv1.ReleasesNotAppliedCondition)).To(HavePrefix("1 release(s) not applied in full (ChartUnresolved 1)"))
	g.Consistently(func(g Gomega) {
		ruleMatches(g, ts, 1)
		statusNamesNone(g, ts, ns, "tenant-chosen-name", "never-made")
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(conditions.GetMessage(ts, meta.ReadyCondition)).To(Equal("rule matches 1 release(s); some releases are not applied in full (ReleasesNotApplied)"))
	g.Expect(testenv.KStatus(t, ts)).To(BeEquivalentTo("Current"))

	// Its source appears, of another chart: decided, nothing is left to say.
	hc := &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: "never-made", Namespace: ns},
		Spec: sourcev1.HelmChartSpec{Chart: "redis", Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "apps"}},
	}
	g.Expect(tenant.Create(ctx, hc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)).To(Succeed())
		g.Expect(conditions.Get(ts, trustv1.ReleasesNotAppliedCondition)).To(BeNil())
		g.Expect(conditions.GetMessage(ts, meta.ReadyCondition)).To(Equal("rule matches 1 release(s)"))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(env.WarningCount(g, ns, helmv2.HelmReleaseKind, broken.Name, trustv1.ChartUnresolvedReason)).To(BeEquivalentTo(1),
		"told once, not on every count of the rule")
}
