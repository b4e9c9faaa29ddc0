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

package flux

import (
	"context"
	"encoding/json"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/publish/chart"
)

// config/samples/flux/helm: credo's chart from an OCIRepository, verified
// with cosign, installed by a HelmRelease into credo-system.
func TestHelmSampleIsValidFluxObjects(t *testing.T) {
	g := NewWithT(t)
	objs := build(g, repoPath("config", "samples", "flux", "helm"))
	g.Expect(objs).To(HaveLen(2))
	dryRunAll(g, objs)

	var repo sourcev1.OCIRepository
	g.Expect(byKind(objs, sourcev1.OCIRepositoryKind)).To(HaveLen(1))
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(byKind(objs, sourcev1.OCIRepositoryKind)[0].Object, &repo)).To(Succeed())
	g.Expect(repo.Spec.URL).To(Equal("oci://ghcr.io/credo-dev/charts/" + chart.Name))
	g.Expect(repo.Spec.Reference).NotTo(BeNil())
	g.Expect(repo.Spec.Reference.Tag).To(MatchRegexp(`^\d+\.\d+\.\d+$`), "the source pins a chart version")
	g.Expect(repo.Spec.LayerSelector).NotTo(BeNil())
	g.Expect(repo.Spec.LayerSelector.MediaType).To(Equal("application/vnd.cncf.helm.chart.content.v1.tar+gzip"))
	g.Expect(repo.Spec.LayerSelector.Operation).To(Equal(sourcev1.OCILayerCopy))
	g.Expect(repo.Spec.Verify).NotTo(BeNil())
	g.Expect(repo.Spec.Verify.Provider).To(Equal("cosign"))

	var hr helmv2.HelmRelease
	g.Expect(byKind(objs, helmv2.HelmReleaseKind)).To(HaveLen(1))
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(byKind(objs, helmv2.HelmReleaseKind)[0].Object, &hr)).To(Succeed())
	g.Expect(hr.Spec.ChartRef).NotTo(BeNil())
	g.Expect(hr.Spec.ChartRef.Kind).To(Equal(sourcev1.OCIRepositoryKind))
	g.Expect(hr.Spec.ChartRef.Name).To(Equal(repo.Name))
	g.Expect(hr.Namespace).To(Equal(repo.Namespace))
	g.Expect(hr.Spec.TargetNamespace).To(Equal(chart.DefaultNamespace))
	g.Expect(hr.Spec.Install).NotTo(BeNil())
	g.Expect(hr.Spec.Install.CreateNamespace).To(BeTrue(), "the chart does not create its namespace")

	// The sample's values are the chart's: they render.
	values := map[string]any{}
	if hr.Spec.Values != nil {
		g.Expect(json.Unmarshal(hr.Spec.Values.Raw, &values)).To(Succeed())
	}
	_, err := chart.Render(repoPath("charts", chart.Name), hr.Spec.TargetNamespace, values)
	g.Expect(err).NotTo(HaveOccurred())
}

// Every object the committed chart renders, with its defaults and with the
// optional NetworkPolicy, is one the API server accepts: a server-side
// apply, dry run (unknown fields are errors), whether it exists or not.
func TestChartRendersObjectsTheAPIServerAccepts(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults":       nil,
		"network policy": {"networkPolicy": map[string]any{"enabled": true}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := chart.Render(repoPath("charts", chart.Name), chart.DefaultNamespace, values)
			g.Expect(err).NotTo(HaveOccurred())
			for _, o := range objs {
				err := env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
					client.DryRunAll, client.FieldOwner("credo-chart-test"), client.ForceOwnership)
				g.Expect(err).NotTo(HaveOccurred(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			}
		})
	}
}
