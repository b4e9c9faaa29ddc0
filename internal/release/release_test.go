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
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func hr(chart string, l map[string]string) *helmv2.HelmRelease {
	h := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant", UID: "u1", Labels: l}}
	if chart != "" {
		h.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: chart}}
	}
	return h
}

func TestRuleSelects(t *testing.T) {
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pg"}}
	tenant := &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "true"}}
	for _, tc := range []struct {
		name string
		rule Rule
		hr   *helmv2.HelmRelease
		ns   labels.Set
		want bool
	}{
		{"chart matches", Rule{Chart: "postgres"}, hr("postgres", nil), nil, true},
		{"chart differs", Rule{Chart: "postgres"}, hr("mysql", nil), nil, false},
		{"a release without a chart template", Rule{Chart: "postgres"}, hr("", nil), nil, false},
		{"release labels match", Rule{ReleaseSelector: app}, hr("", map[string]string{"app": "pg"}), nil, true},
		{"release labels differ", Rule{ReleaseSelector: app}, hr("", map[string]string{"app": "x"}), nil, false},
		{"chart and labels both needed", Rule{Chart: "postgres", ReleaseSelector: app}, hr("postgres", nil), nil, false},
		{"namespace labels match", Rule{Chart: "postgres", NamespaceSelector: tenant}, hr("postgres", nil), labels.Set{"tenant": "true"}, true},
		{"namespace labels differ", Rule{Chart: "postgres", NamespaceSelector: tenant}, hr("postgres", nil), labels.Set{}, false},
		{"a namespace selector alone selects nothing", Rule{NamespaceSelector: tenant}, hr("postgres", nil), labels.Set{"tenant": "true"}, false},
		{"an empty rule selects nothing", Rule{}, hr("postgres", nil), nil, false},
	} {
		got, err := tc.rule.Selects(context.Background(), nil, tc.hr, tc.ns)
		if err != nil || got != tc.want {
			t.Errorf("%s: Selects = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestRuleNamesItsBadSelector(t *testing.T) {
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Sometimes"}}}
	for name, rule := range map[string]Rule{
		"releaseSelector":   {ReleaseSelector: bad},
		"namespaceSelector": {Chart: "postgres", NamespaceSelector: bad},
	} {
		if err := rule.Validate(); err == nil || err.Error()[:len(name)] != name {
			t.Errorf("Validate of a bad %s = %v, want an error naming it", name, err)
		}
		if _, err := rule.Selects(context.Background(), nil, hr("postgres", nil), nil); err == nil {
			t.Errorf("Selects with a bad %s returned no error", name)
		}
	}
}

func TestOwnerReferenceLetsTheReleaseGo(t *testing.T) {
	ref := OwnerReference(hr("postgres", nil))
	if ref.Kind != helmv2.HelmReleaseKind || ref.APIVersion != helmv2.GroupVersion.String() || ref.Name != "db" || ref.UID != "u1" {
		t.Errorf("OwnerReference = %+v", ref)
	}
	if ref.BlockOwnerDeletion == nil || *ref.BlockOwnerDeletion || ref.Controller != nil {
		t.Errorf("the reference must not block the release's deletion nor claim control: %+v", ref)
	}
}
