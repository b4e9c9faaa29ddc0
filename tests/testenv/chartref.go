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

package testenv

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationKindLabel is the label the platform puts on an application's
// HelmRelease (apps.cozystack.io/application.kind: Postgres).
const ApplicationKindLabel = "apps.cozystack.io/application.kind"

// NewChartRefRelease creates a HelmRelease of the platform's shape: its
// chart is a source named by spec.chartRef (kind ExternalArtifact,
// OCIRepository or HelmChart, often in a platform namespace), not a chart
// template.
func (e *Env) NewChartRefRelease(t testing.TB, ns, name string, ref helmv2.CrossNamespaceSourceReference, labels map[string]string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour}, ChartRef: &ref},
	}
	NewWithT(t).Expect(e.Client.Create(context.Background(), hr)).To(Succeed())
	return hr
}

// NewOCIRepository creates an OCIRepository of url in ns.
func (e *Env) NewOCIRepository(t testing.TB, ns, name, url string) *sourcev1.OCIRepository {
	t.Helper()
	repo := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       sourcev1.OCIRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Hour}},
	}
	NewWithT(t).Expect(e.Client.Create(context.Background(), repo)).To(Succeed())
	return repo
}

// NewHelmChart creates a HelmChart of chart in ns.
func (e *Env) NewHelmChart(t testing.TB, ns, name, chart string) *sourcev1.HelmChart {
	t.Helper()
	hc := &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sourcev1.HelmChartSpec{
			Chart: chart, Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "apps"},
		},
	}
	NewWithT(t).Expect(e.Client.Create(context.Background(), hc)).To(Succeed())
	return hc
}
