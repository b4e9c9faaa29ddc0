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

package release

import (
	"context"
	"errors"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
)

// sources holds the chart sources of the platform namespace "cozy-system";
// resolving a chart name is a pure read, so a fake reader serves here (the
// controllers' suites resolve them on the real control plane).
func sources(t *testing.T) client.Reader {
	t.Helper()
	s := runtime.NewScheme()
	if err := sourcev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(
		&sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Name: "pg-chart", Namespace: "cozy-system"},
			Spec: sourcev1.HelmChartSpec{Chart: "postgres"}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "pg-oci", Namespace: "cozy-system"},
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://ghcr.io/cozystack/charts/postgres"}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "userinfo", Namespace: "cozy-system"},
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://robot@registry.local/charts/postgres"}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "local-oci", Namespace: "tenant"},
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://registry.local:5000/postgres:16@sha256:abc"}},
	).Build()
}

func withRef(kind, name, namespace string) *helmv2.HelmRelease {
	h := hr("", map[string]string{"apps.cozystack.io/application.kind": "Postgres"})
	h.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: kind, Name: name, Namespace: namespace}
	return h
}

func TestChartNameResolvesChartRef(t *testing.T) {
	c := sources(t)
	for _, tc := range []struct {
		name string
		hr   *helmv2.HelmRelease
		want string
	}{
		{"chart template", hr("postgres", nil), "postgres"},
		{"neither", hr("", nil), ""},
		{"HelmChart spec.chart", withRef("HelmChart", "pg-chart", "cozy-system"), "postgres"},
		{"OCIRepository URL's last element", withRef("OCIRepository", "pg-oci", "cozy-system"), "postgres"},
		{"OCIRepository in the release's namespace, tag and digest dropped", withRef("OCIRepository", "local-oci", ""), "postgres"},
		{"OCIRepository with a user in its URL", withRef("OCIRepository", "userinfo", "cozy-system"), "postgres"},
		{"ExternalArtifact's name", withRef("ExternalArtifact", "postgres", "cozy-system"), "postgres"},
	} {
		got, err := ChartName(context.Background(), c, tc.hr)
		if err != nil || got != tc.want {
			t.Errorf("%s: ChartName = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestChartNameOfAMissingSourceIsUnresolved(t *testing.T) {
	c := sources(t)
	for name, h := range map[string]*helmv2.HelmRelease{
		"missing HelmChart":           withRef("HelmChart", "gone", "cozy-system"),
		"OCIRepository in another ns": withRef("OCIRepository", "pg-oci", ""),
		"unknown kind":                withRef("GitRepository", "pg", "cozy-system"),
	} {
		_, err := ChartName(context.Background(), c, h)
		var unresolved *UnresolvedError
		if !errors.As(err, &unresolved) || unresolved.Release.String() != "tenant/db" || !strings.Contains(err.Error(), "cannot be resolved") {
			t.Errorf("%s: ChartName error = %v, want an *UnresolvedError naming tenant/db", name, err)
		}
	}
}

func TestRuleSelectsByChartRef(t *testing.T) {
	c := sources(t)
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"apps.cozystack.io/application.kind": "Postgres"}}
	ref := &releasev1.ChartRef{Kind: "ExternalArtifact", Name: "postgres"}
	platform := []string{"flux-system", "cozy-system"}
	for _, tc := range []struct {
		name string
		rule Rule
		hr   *helmv2.HelmRelease
		want bool
	}{
		{"chart through an OCIRepository", Rule{Chart: "postgres"}, withRef("OCIRepository", "pg-oci", "cozy-system"), true},
		{"chart through an ExternalArtifact", Rule{Chart: "postgres"}, withRef("ExternalArtifact", "postgres", "cozy-system"), true},
		{"chart differs", Rule{Chart: "mongodb"}, withRef("HelmChart", "pg-chart", "cozy-system"), false},
		{"chartRef without a namespace, in a platform source namespace", Rule{ChartRef: ref, SourceNamespaces: platform},
			withRef("ExternalArtifact", "postgres", "cozy-system"), true},
		// A tenant's source of the name, in its own namespace, is not the platform's.
		{"chartRef without a namespace, in the release's own namespace", Rule{ChartRef: ref, SourceNamespaces: platform},
			withRef("ExternalArtifact", "postgres", ""), false},
		{"chartRef without a namespace, in a tenant's other namespace", Rule{ChartRef: ref, SourceNamespaces: platform},
			withRef("ExternalArtifact", "postgres", "tenant-b"), false},
		{"chartRef without a namespace and no platform source namespace", Rule{ChartRef: ref},
			withRef("ExternalArtifact", "postgres", "cozy-system"), false},
		{"chartRef in its namespace", Rule{ChartRef: &releasev1.ChartRef{Kind: "ExternalArtifact", Name: "postgres", Namespace: "cozy-system"}},
			withRef("ExternalArtifact", "postgres", "cozy-system"), true},
		{"chartRef in another namespace", Rule{ChartRef: &releasev1.ChartRef{Kind: "ExternalArtifact", Name: "postgres", Namespace: "other"}},
			withRef("ExternalArtifact", "postgres", "cozy-system"), false},
		{"chartRef of another kind", Rule{ChartRef: ref, SourceNamespaces: platform}, withRef("OCIRepository", "postgres", "cozy-system"), false},
		{"chartRef on a chart template", Rule{ChartRef: ref, SourceNamespaces: platform}, hr("postgres", nil), false},
		{"the platform's label", Rule{ReleaseSelector: app}, withRef("ExternalArtifact", "anything", "cozy-system"), true},
		// The label does not match: the missing source is never read.
		{"labels first", Rule{Chart: "postgres", ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}},
			withRef("HelmChart", "gone", "cozy-system"), false},
	} {
		got, err := tc.rule.Selects(context.Background(), c, tc.hr, nil)
		if err != nil || got != tc.want {
			t.Errorf("%s: Selects = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	var unresolved *UnresolvedError
	if _, err := (Rule{Chart: "postgres"}).Selects(context.Background(), c, withRef("HelmChart", "gone", "cozy-system"), nil); !errors.As(err, &unresolved) {
		t.Errorf("Selects of a release whose HelmChart is missing = %v, want an *UnresolvedError", err)
	}
}

func TestReferringListsTheReleasesOfASource(t *testing.T) {
	s := runtime.NewScheme()
	if err := helmv2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	a, b, other := withRef("OCIRepository", "pg-oci", "cozy-system"), withRef("OCIRepository", "pg-oci", ""), withRef("HelmChart", "pg-oci", "cozy-system")
	a.Name, b.Name, other.Name = "a", "b", "other"
	b.Namespace = "cozy-system"
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(a, b, other).Build()
	got, err := Referring(context.Background(), c, &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "pg-oci", Namespace: "cozy-system"}})
	if err != nil || len(got) != 2 || got[0].Name != "b" || got[1].Name != "a" {
		t.Errorf("Referring = %v, %v; want cozy-system/b and tenant/a (list order)", got, err)
	}
}
