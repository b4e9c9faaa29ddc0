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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// newRule creates a name-leg rule limited to the namespace ns.
func newRule(t *testing.T, ns string, spec trustv1.TrustSourceSpec) *trustv1.TrustSource {
	t.Helper()
	spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	if spec.SecretName == "" {
		spec.SecretName = "{release}-ca"
	}
	ts := &trustv1.TrustSource{ObjectMeta: metav1.ObjectMeta{Name: "rule-" + ns}, Spec: spec}
	NewWithT(t).Expect(env.Client.Create(context.Background(), ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	return ts
}

// ruleReady waits until the rule's status is whole for its generation and
// its Ready has the given status and reason, and returns it.
func ruleReady(g Gomega, ts *trustv1.TrustSource, status metav1.ConditionStatus, reason string) *trustv1.TrustSource {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ts), ts)).To(Succeed())
		// The conditions and the rest of the status are two patches: the
		// status is whole once it records the generation.
		g.Expect(ts.Status.ObservedGeneration).To(Equal(ts.Generation))
		c := conditions.Get(ts, meta.ReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status))
		g.Expect(c.Reason).To(Equal(reason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return ts
}

// ruleMatches waits until the rule is Ready and counts n releases (the
// conditions and the count are two status patches).
func ruleMatches(g Gomega, ts *trustv1.TrustSource, n int32) {
	g.Eventually(func(g Gomega) {
		ruleReady(g, ts, metav1.ConditionTrue, meta.SucceededReason)
		g.Expect(ts.Status.MatchedReleases).To(Equal(n))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestChartRuleProjectsForReleasesOfThePlatformsShape(t *testing.T) {
	g := NewWithT(t)
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	env.NewOCIRepository(t, platform, "postgres-chart", "oci://ghcr.io/cozystack/charts/postgres")
	env.NewChartRefRelease(t, ns, "oci", helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "postgres-chart", Namespace: platform}, nil)
	env.NewChartRefRelease(t, ns, "artifact", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "postgres", Namespace: platform}, nil)
	env.NewChartRefRelease(t, ns, "other", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "redis", Namespace: platform}, nil)
	ts := newRule(t, ns, trustv1.TrustSourceSpec{Chart: "postgres"})
	for _, rel := range []string{"oci", "artifact", "other"} {
		cert, key := testpki.CA(t, rel+"-ca")
		env.NewSecret(t, ns, rel+"-ca", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})
	}

	g.Expect(projectionOf(g, ns, "oci").Data).To(HaveKey("ca.crt"))
	g.Expect(projectionOf(g, ns, "artifact").Data).To(HaveKey("ca.crt"))
	ruleMatches(g, ts, 2) // the redis artifact's release is not a postgres release
}

func TestChartRefRuleSelectsTheReleasesOfOneSource(t *testing.T) {
	g := NewWithT(t)
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "cozy-postgres", Namespace: platform},
		map[string]string{testenv.ApplicationKindLabel: "Postgres"})
	cert, _ := testpki.CA(t, "pg-ca")
	env.NewSecret(t, ns, "pg-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	ts := newRule(t, ns, trustv1.TrustSourceSpec{ChartRef: &releasev1.ChartRef{Kind: "ExternalArtifact", Name: "cozy-postgres", Namespace: platform}})

	g.Expect(projectionOf(g, ns, "pg").Data).To(Equal(map[string][]byte{"ca.crt": cert}))
	ruleReady(g, ts, metav1.ConditionTrue, meta.SucceededReason)
}

func TestARuleThatMatchesNothingIsNotReady(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	// The shipped sample's shape on the platform's releases: a chart name
	// none of them has.
	env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "cozy-postgres-application"},
		map[string]string{testenv.ApplicationKindLabel: "Postgres"})
	ts := newRule(t, ns, trustv1.TrustSourceSpec{Chart: "postgres"})

	ts = ruleReady(g, ts, metav1.ConditionFalse, trustv1.NoReleasesMatchedReason)
	g.Expect(conditions.Get(ts, meta.ReadyCondition).Message).To(And(ContainSubstring(`chart "postgres"`), ContainSubstring("apps.cozystack.io/application.kind")))
	g.Expect(conditions.IsStalled(ts)).To(BeFalse(), "releases may come: the rule waits, it has not failed")

	// Selected by the label instead, it matches.
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ts), ts); err != nil {
			return err
		}
		ts.Spec.Chart = ""
		ts.Spec.ReleaseSelector = &metav1.LabelSelector{MatchLabels: map[string]string{testenv.ApplicationKindLabel: "Postgres"}}
		return env.Client.Update(context.Background(), ts)
	}).Should(Succeed())
	ruleMatches(g, ts, 1)
}

func TestAnUnresolvedChartIsReportedAndKeepsTheProjection(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	hr := env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "pg-chart", Namespace: platform}, nil)
	cert, _ := testpki.CA(t, "pg-ca")
	env.NewSecret(t, ns, "pg-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	ts := newRule(t, ns, trustv1.TrustSourceSpec{Chart: "postgres"})

	// The HelmChart does not exist yet: the release is told that the rule
	// cannot decide, and why; the rule counts it, naming no release.
	ev := env.ReleaseWarning(g, hr, trustv1.ChartUnresolvedReason)
	g.Expect(ev.Message).To(ContainSubstring("the chart of chartRef HelmChart " + platform + "/pg-chart cannot be resolved"))
	ts = notApplied(g, ts, trustv1.ChartUnresolvedReason)
	g.Expect(conditions.GetMessage(ts, trustv1.ReleasesNotAppliedCondition)).NotTo(ContainSubstring(ns))

	// The HelmChart appears: its watch resolves the release.
	hc := env.NewHelmChart(t, platform, "pg-chart", "postgres")
	g.Expect(projectionOf(g, ns, "pg").Data).To(Equal(map[string][]byte{"ca.crt": cert}))
	ruleReady(g, ts, metav1.ConditionTrue, meta.SucceededReason)

	// It goes again: reported, and the anchor the rule made stays on its
	// source, Ready, following a rotation.
	g.Expect(env.Client.Delete(ctx, hc)).To(Succeed())
	notApplied(g, ts, trustv1.ChartUnresolvedReason)
	g.Consistently(func() map[string][]byte { return projectionOf(g, ns, "pg").Data }, 2*time.Second, 200*time.Millisecond).
		Should(Equal(map[string][]byte{"ca.crt": cert}))
	rotated, _ := testpki.CA(t, "pg-ca-2")
	src := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg-ca"}, src)).To(Succeed())
	src.Data["ca.crt"] = rotated
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	g.Eventually(func() []byte { return projectionOf(g, ns, "pg").Data["ca.crt"] }, 20*time.Second, 100*time.Millisecond).Should(Equal(rotated))
	ta := anchorWith(g, ns, "pg", ready)

	// Its claim is the rule's own source, not whatever the anchor says: an
	// anchor moved to another Secret meanwhile is moved back.
	other, _ := testpki.CA(t, "other-ca")
	env.NewSecret(t, ns, "other", nil, nil, map[string][]byte{"ca.crt": other})
	patch := client.MergeFrom(ta.DeepCopy())
	ta.Spec.Source.Name = "other"
	g.Expect(env.Client.Patch(ctx, ta, patch)).To(Succeed())
	anchorWith(g, ns, "pg", func(ta *trustv1.TrustAnchor) bool { return ready(ta) && ta.Spec.Source.Name == "pg-ca" })
	g.Consistently(func() []byte { return projectionOf(g, ns, "pg").Data["ca.crt"] }, 2*time.Second, 200*time.Millisecond).Should(Equal(rotated))
}

// shippedRule reads the TrustSource name of config/samples/trust/trustsources.yaml.
func shippedRule(t *testing.T, name string) *trustv1.TrustSource {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "samples", "trust", "trustsources.yaml"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var ts trustv1.TrustSource
		NewWithT(t).Expect(yaml.UnmarshalStrict([]byte(doc), &ts)).To(Succeed())
		if ts.Name == name {
			return &ts
		}
	}
	t.Fatalf("no TrustSource %s in the samples", name)
	return nil
}

func TestTheShippedRuleProjectsForChartRefReleases(t *testing.T) {
	g := NewWithT(t)
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	ts := shippedRule(t, "cloudnative-pg")
	// Limited to this test's namespace; the selection is the sample's.
	ts.Name = "cloudnative-pg-" + ns
	ts.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	g.Expect(env.Client.Create(context.Background(), ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })

	postgres := map[string]string{testenv.ApplicationKindLabel: "Postgres"}
	env.NewOCIRepository(t, platform, "postgres", "oci://ghcr.io/cozystack/charts/postgres")
	env.NewChartRefRelease(t, ns, "oci", helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "postgres", Namespace: platform}, postgres)
	env.NewChartRefRelease(t, ns, "artifact", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "postgres", Namespace: platform}, postgres)
	for _, rel := range []string{"oci", "artifact"} {
		// CloudNativePG's <cluster>-ca holds the key too.
		cert, key := testpki.CA(t, rel+"-ca")
		env.NewSecret(t, ns, rel+"-ca", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})
		g.Expect(projectionOf(g, ns, rel).Data).To(Equal(map[string][]byte{"ca.crt": cert}))
	}
	ruleMatches(g, ts, 2)
}
