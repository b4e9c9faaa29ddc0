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

package monitoring

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	availability "k8s.io/kube-aggregator/pkg/controllers/status/metrics"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/tests/controlplane"
)

// platformMetric is a metric of a Kubernetes component, not of credo, that
// an alert rule may read: the labels the component serves it with and where
// it comes from.
type platformMetric struct {
	labels []string
	source string
}

// accessAPIService is the APIService of credo's aggregated API
// (config/apiservice), the name kube-apiserver's gauge carries.
const accessAPIService = "v1alpha1.access.credo.dev"

// platformMetrics are the only metrics of Kubernetes' own components the
// rules may read. Each is checked against its component:
// aggregator_unavailable_apiservice here, by kube-aggregator's own
// collector (the version of go.mod, kube-apiserver's); both, served by the
// real kube-apiserver and kube-state-metrics, by
// TestKubernetesServesThePlatformMetricsTheRulesRead (`make test-monitoring`).
var platformMetrics = map[string]platformMetric{
	"aggregator_unavailable_apiservice": {
		labels: []string{"name"},
		source: "kube-apiserver, k8s.io/kube-aggregator pkg/controllers/status/metrics (ALPHA): 1 while the APIService's Available condition is not True, 0 when it is; gone when the APIService is deleted",
	},
	"kube_namespace_status_condition": {
		labels: []string{"namespace", "condition", "status"},
		source: "kube-state-metrics v2.18.0, namespaces collector (on by default), internal/store/namespace.go (EXPERIMENTAL): one series per condition of a namespace and status true/false/unknown, 1 for the condition's status",
	},
}

func TestEveryPlatformMetricIsReadByARuleAndSaysWhereItComesFrom(t *testing.T) {
	g := NewWithT(t)
	var rules ruleFile
	g.Expect(yaml.UnmarshalStrict(monitoringFile(t, "prometheus-rules.yaml"), &rules)).To(Succeed())
	read := map[string]bool{}
	p := parser.NewParser(parser.Options{})
	for _, group := range rules.Spec.Groups {
		for _, r := range group.Rules {
			expr, err := p.ParseExpr(r.Expr)
			g.Expect(err).NotTo(HaveOccurred(), "expr of %s", r.Alert)
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				if vs, ok := node.(*parser.VectorSelector); ok {
					read[vs.Name] = true
				}
				return nil
			})
		}
	}
	for name, m := range platformMetrics {
		g.Expect(read).To(HaveKey(name), "%s is listed but no rule reads it: remove it", name)
		g.Expect(m.source).NotTo(BeEmpty(), name)
		g.Expect(m.labels).NotTo(BeEmpty(), name)
	}
}

// The platform metrics' label values are the names Kubernetes and credo
// give: the APIService config/apiservice ships, the namespace condition
// kube-controller-manager sets, and the status as kube-state-metrics
// lowercases it.
func TestThePlatformRulesSelectTheNamesKubernetesAndCredoGive(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "apiservice", "apiservice.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var apiService apiregistrationv1.APIService
	g.Expect(yaml.UnmarshalStrict(raw, &apiService)).To(Succeed())
	g.Expect(apiService.Name).To(Equal(accessAPIService))

	want := map[string]map[string][]string{
		"aggregator_unavailable_apiservice": {"name": {accessAPIService}},
		"kube_namespace_status_condition": {
			"condition": {string(corev1.NamespaceDeletionDiscoveryFailure)},
			"status":    {strings.ToLower(string(corev1.ConditionTrue))},
		},
	}
	var rules ruleFile
	g.Expect(yaml.UnmarshalStrict(monitoringFile(t, "prometheus-rules.yaml"), &rules)).To(Succeed())
	p := parser.NewParser(parser.Options{})
	matched := map[string]bool{}
	for _, group := range rules.Spec.Groups {
		for _, r := range group.Rules {
			expr, err := p.ParseExpr(r.Expr)
			g.Expect(err).NotTo(HaveOccurred(), "expr of %s", r.Alert)
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				vs, ok := node.(*parser.VectorSelector)
				if !ok || want[vs.Name] == nil {
					return nil
				}
				for _, m := range vs.LabelMatchers {
					if values, ok := want[vs.Name][m.Name]; ok {
						matched[vs.Name+"/"+m.Name] = true
						g.Expect(m.Type).To(Equal(labels.MatchEqual), "%s: %s", r.Alert, m)
						g.Expect(values).To(ContainElement(m.Value), "%s: %s", r.Alert, m)
					}
				}
				return nil
			})
		}
	}
	for name, byLabel := range want {
		for label := range byLabel {
			g.Expect(matched).To(HaveKey(name+"/"+label), "no rule matches %s on %s", name, label)
		}
	}
}

// kube-apiserver's gauge, from kube-aggregator's own collector: its name,
// its only label, and its value for an unavailable, an available and a
// deleted APIService.
func TestKubeAggregatorServesTheAPIServiceGaugeTheRulesRead(t *testing.T) {
	g := NewWithT(t)
	reg := metrics.NewKubeRegistry()
	m := availability.New()
	g.Expect(m.Register(reg.Register, reg.CustomRegister)).To(Succeed())

	gauge := func() (value float64, labels []string, found bool) {
		families, err := reg.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() != "aggregator_unavailable_apiservice" {
				continue
			}
			for _, s := range f.GetMetric() {
				got := labelsOf(s)
				if got["name"] == accessAPIService {
					return s.GetGauge().GetValue(), slices.Sorted(maps.Keys(got)), true
				}
			}
		}
		return 0, nil, false
	}

	m.SetAPIServiceUnavailable(accessAPIService)
	value, labels, found := gauge()
	g.Expect(found).To(BeTrue(), "aggregator_unavailable_apiservice{name=%q}", accessAPIService)
	g.Expect(value).To(Equal(1.0))
	g.Expect(labels).To(Equal(slices.Sorted(slices.Values(platformMetrics["aggregator_unavailable_apiservice"].labels))))

	m.SetAPIServiceAvailable(accessAPIService)
	value, _, found = gauge()
	g.Expect(found).To(BeTrue())
	g.Expect(value).To(Equal(0.0))

	m.ForgetAPIService(accessAPIService)
	_, _, found = gauge()
	g.Expect(found).To(BeFalse(), "a deleted APIService has no series")
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}
