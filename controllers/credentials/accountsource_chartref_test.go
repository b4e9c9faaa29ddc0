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
	"os"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// sourceReason waits until the source's Ready has reason and returns it.
func sourceReason(g Gomega, src *credv1.AccountSource, reason string) *credv1.AccountSource {
	g.Eventually(func() string {
		_ = env.Client.Get(context.Background(), client.ObjectKeyFromObject(src), src)
		return conditions.GetReason(src, meta.ReadyCondition)
	}, 20*time.Second, 100*time.Millisecond).Should(Equal(reason))
	return src
}

// selectChart narrows src to the releases of chart.
func selectChart(g Gomega, src *credv1.AccountSource, chart string) {
	g.Eventually(func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(src), src); err != nil {
			return err
		}
		src.Spec.Chart = chart
		return env.Client.Update(context.Background(), src)
	}).Should(Succeed())
}

func TestASourceDerivesTheAccountsOfChartRefReleasesAndKeepsThemWhileTheChartIsUnresolved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	src := newPostgresUsersSource(t, "pg-"+ns, ns)
	// By chart name, resolved through the OCIRepository the release's
	// chartRef names in the platform namespace.
	selectChart(g, src, "postgres")
	repo := env.NewOCIRepository(t, platform, "pg", "oci://ghcr.io/cozystack/charts/postgres")
	hr := env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "pg", Namespace: platform},
		map[string]string{"app": ns})
	setValues(g, ns, "pg", `{"users":{"alice":{}}}`)

	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"alice", "postgres"}))
	sourceReason(g, src, meta.SucceededReason)

	// The OCIRepository goes: the release cannot be decided, which the
	// release is told (the source counts it, naming no release), and its
	// accounts (and their passwords) stay.
	g.Expect(env.Client.Delete(ctx, repo)).To(Succeed())
	ev := env.ReleaseWarning(g, hr, credv1.ChartUnresolvedReason)
	g.Expect(ev.Message).To(ContainSubstring("the chart of chartRef OCIRepository " + platform + "/pg cannot be resolved"))
	g.Expect(ev.Message).To(ContainSubstring("its accounts are kept"))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(src), src)).To(Succeed())
		g.Expect(conditions.GetReason(src, credv1.ReleasesNotAppliedCondition)).To(Equal(credv1.ChartUnresolvedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	// The source's own selector (app=<namespace>) is the platform's text.
	sourceStatusNamesNone(g, src, ns+"/pg", platform+"/pg")
	g.Consistently(func() []string { return usernamesOf(g, ns, src.Name) }, 2*time.Second, 200*time.Millisecond).
		Should(Equal([]string{"alice", "postgres"}))
}

func TestASourceThatMatchesNoReleaseIsNotReady(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	src := newPostgresUsersSource(t, "pg-"+ns, ns)
	src = sourceReason(g, src, credv1.NoReleasesMatchedReason)
	g.Expect(conditions.Get(src, meta.ReadyCondition).Message).To(ContainSubstring("app=" + ns))

	env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "postgres", Namespace: ns},
		map[string]string{"app": ns})
	// The conditions and the counts are two status patches.
	g.Eventually(func(g Gomega) {
		sourceReason(g, src, meta.SucceededReason)
		g.Expect(src.Status.MatchedReleases).To(BeEquivalentTo(1))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestTheShippedSourceDerivesTheAccountsOfAChartRefRelease(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "samples", "credentials", "accountsource.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var src credv1.AccountSource
	g.Expect(yaml.UnmarshalStrict(raw, &src)).To(Succeed())
	g.Expect(env.Client.Create(context.Background(), &src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), &src) })

	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	env.NewChartRefRelease(t, ns, "main", helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "postgres", Namespace: platform},
		map[string]string{testenv.ApplicationKindLabel: "Postgres"})
	setValues(g, ns, "main", `{"users":{"alice":{}}}`)
	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"alice", "postgres"}))
	accountWith(g, ns, "main-postgres", accountReady)
}

func TestATenantAccountRefusedWhileTheChartIsUnresolvedIsReleasedWhenItResolves(t *testing.T) {
	g := NewWithT(t)
	ns, platform := env.NewNamespace(t), env.NewNamespace(t)
	src := newPostgresUsersSource(t, "pg-"+ns, ns)
	selectChart(g, src, "postgres")
	env.NewChartRefRelease(t, ns, "pg", helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "db", Namespace: platform},
		map[string]string{"app": ns})

	// Whether the source reserves pg.postgres.account for its platform
	// account is not known while the HelmChart is missing: refused.
	newAccount(t, ns, "mine", "pg", "postgres", "scram-sha-256")
	accountWith(g, ns, "mine", accountReason(credv1.SecretFailedCondition, credv1.AccountCollisionReason))

	// The HelmChart appears, of another chart: the name is free, and the
	// source's watch of it tells the account at once.
	env.NewHelmChart(t, platform, "db", "mysql")
	accountWith(g, ns, "mine", accountReady)
}
