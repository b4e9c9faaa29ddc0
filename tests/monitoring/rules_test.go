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

// Package monitoring checks config/monitoring: the alert rules here (every
// expression parses as PromQL and reads only metrics and labels that credo,
// its kube-state-metrics configuration, or the few Kubernetes metrics of
// platformMetrics serve), and, with the monitoring build tag
// (`make test-monitoring`), the kube-state-metrics configuration run by
// kube-state-metrics itself against the local control plane, and the
// platform metrics served by the real kube-apiserver and kube-state-metrics.
package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/template"

	fluxmetrics "github.com/fluxcd/pkg/runtime/metrics"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/tests/controlplane"
)

// ruleFile is a PrometheusRule, read strictly: an unknown field is a typo.
type ruleFile struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ksmConfig is the part of a CustomResourceStateMetrics configuration that
// names metrics and their labels.
type ksmConfig struct {
	Kind string `json:"kind"`
	Spec struct {
		Resources []struct {
			GroupVersionKind struct {
				Group, Version, Kind string
			} `json:"groupVersionKind"`
			MetricNamePrefix *string             `json:"metricNamePrefix"`
			LabelsFromPath   map[string][]string `json:"labelsFromPath"`
			Metrics          []struct {
				Name           string              `json:"name"`
				Help           string              `json:"help"`
				LabelsFromPath map[string][]string `json:"labelsFromPath"`
				Each           struct {
					Type string `json:"type"`
					Info *struct {
						LabelsFromPath map[string][]string `json:"labelsFromPath"`
					} `json:"info"`
					Gauge *struct {
						Path           []string            `json:"path"`
						NilIsZero      bool                `json:"nilIsZero"`
						LabelsFromPath map[string][]string `json:"labelsFromPath"`
					} `json:"gauge"`
				} `json:"each"`
			} `json:"metrics"`
		} `json:"resources"`
	} `json:"spec"`
}

func monitoringFile(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "monitoring", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// servedMetrics returns every metric credo's binaries and its
// kube-state-metrics configuration serve, and the platformMetrics, with the
// labels of each.
func servedMetrics(t *testing.T) map[string]map[string]bool {
	t.Helper()
	served := map[string]map[string]bool{}
	for name, m := range platformMetrics {
		served[name] = map[string]bool{}
		for _, l := range m.labels {
			served[name][l] = true
		}
	}
	for _, c := range append(metrics.Collectors(), fluxmetrics.NewRecorder().Collectors()...) {
		for name, labels := range describe(c) {
			if _, dup := served[name]; dup {
				t.Errorf("%s is served by credo and listed as a platform metric", name)
			}
			served[name] = labels
		}
	}
	var cfg ksmConfig
	if err := yaml.UnmarshalStrict(monitoringFile(t, "kube-state-metrics.yaml"), &cfg); err != nil {
		t.Fatalf("kube-state-metrics.yaml: %v", err)
	}
	for _, r := range cfg.Spec.Resources {
		prefix := "kube_customresource"
		if r.MetricNamePrefix != nil {
			prefix = *r.MetricNamePrefix
		}
		for _, m := range r.Metrics {
			name := m.Name
			if prefix != "" {
				name = prefix + "_" + m.Name
			}
			labels := map[string]bool{"customresource_group": true, "customresource_version": true, "customresource_kind": true}
			sets := []map[string][]string{r.LabelsFromPath, m.LabelsFromPath}
			if m.Each.Info != nil {
				sets = append(sets, m.Each.Info.LabelsFromPath)
			}
			if m.Each.Gauge != nil {
				sets = append(sets, m.Each.Gauge.LabelsFromPath)
			}
			for _, set := range sets {
				for l := range set {
					labels[l] = true
				}
			}
			if _, dup := served[name]; dup {
				t.Errorf("%s is served twice: kube-state-metrics up to v2.18 loses series of resources sharing a name", name)
			}
			served[name] = labels
		}
	}
	return served
}

var (
	descName   = regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// describe returns the names and variable labels of a collector's metrics.
func describe(c prometheus.Collector) map[string]map[string]bool {
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	out := map[string]map[string]bool{}
	for d := range ch {
		s := d.String()
		name := descName.FindStringSubmatch(s)
		labels := map[string]bool{}
		if m := descLabels.FindStringSubmatch(s); m != nil && m[1] != "" {
			for _, l := range strings.Split(m[1], ",") {
				labels[l] = true
			}
		}
		if name != nil {
			out[name[1]] = labels
		}
	}
	return out
}

// Prometheus' template functions the annotations may use; the bodies are
// never called, parsing needs only the names.
var promTemplateFuncs = template.FuncMap{
	"humanize": fmtStub, "humanize1024": fmtStub, "humanizeDuration": fmtStub, "humanizePercentage": fmtStub,
	"humanizeTimestamp": fmtStub, "toTime": fmtStub, "title": strings.Title, "toUpper": strings.ToUpper, //nolint:staticcheck // strings.Title is what Prometheus' title function is
	"toLower": strings.ToLower, "reReplaceAll": func(string, string, string) string { return "" },
	"query": func(string) []any { return nil }, "first": func(any) any { return nil }, "label": func(string, any) string { return "" },
	"value": func(any) float64 { return 0 }, "args": func(...any) map[string]any { return nil },
	"safeHtml": fmtStub, "match": func(string, string) bool { return false }, "stripPort": fmtStub,
	"externalURL": func() string { return "" }, "pathPrefix": func() string { return "" },
}

func fmtStub(v any) string { return "" }

func TestAlertRulesParseAndReadOnlyServedMetricsAndLabels(t *testing.T) {
	g := NewWithT(t)
	var rules ruleFile
	g.Expect(yaml.UnmarshalStrict(monitoringFile(t, "prometheus-rules.yaml"), &rules)).To(Succeed())
	g.Expect(rules.APIVersion).To(Equal("monitoring.coreos.com/v1"))
	g.Expect(rules.Kind).To(Equal("PrometheusRule"))
	served := servedMetrics(t)
	p := parser.NewParser(parser.Options{})

	alerts := map[string]bool{}
	for _, group := range rules.Spec.Groups {
		for _, r := range group.Rules {
			t.Run(r.Alert, func(t *testing.T) {
				g := NewWithT(t)
				g.Expect(r.Alert).To(MatchRegexp(`^Credo[A-Za-z]+$`))
				g.Expect(alerts).NotTo(HaveKey(r.Alert), "alert names are unique")
				alerts[r.Alert] = true
				expr, err := p.ParseExpr(r.Expr)
				g.Expect(err).NotTo(HaveOccurred(), "expr of %s", r.Alert)
				g.Expect(expr.Type()).To(Equal(parser.ValueTypeVector), "an alert's expression is a vector")

				selectors := 0
				parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
					vs, ok := node.(*parser.VectorSelector)
					if !ok {
						return nil
					}
					selectors++
					g.Expect(served).To(HaveKey(vs.Name), "%s reads %s, which nothing serves", r.Alert, vs.Name)
					for _, m := range vs.LabelMatchers {
						if m.Name == model.MetricNameLabel {
							continue
						}
						g.Expect(served[vs.Name]).To(HaveKey(m.Name), "%s matches label %s, which %s has not", r.Alert, m.Name, vs.Name)
					}
					return nil
				})
				g.Expect(selectors).To(BeNumerically(">", 0))

				_, err = model.ParseDuration(r.For)
				g.Expect(err).NotTo(HaveOccurred(), "for: %q", r.For)
				g.Expect(r.Labels).To(HaveKey("severity"))
				for _, key := range []string{"summary", "description", "runbook", "runbook_url"} {
					g.Expect(r.Annotations).To(HaveKey(key))
				}
				for key, text := range r.Annotations {
					// Prometheus defines $labels and $value before expanding.
					defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}"
					_, err := template.New(key).Funcs(promTemplateFuncs).Option("missingkey=zero").Parse(defs + text)
					g.Expect(err).NotTo(HaveOccurred(), "annotation %s", key)
				}
			})
		}
	}
	g.Expect(alerts).To(HaveKey("CredoTrustAnchorExpiringSoon"))
	g.Expect(alerts).To(HaveKey("CredoTrustAnchorNotReady"))
	g.Expect(alerts).To(HaveKey("CredoCredentialAccountNotReady"))
	g.Expect(alerts).To(HaveKey("CredoEnrollmentRefusalsSpiking"))
	g.Expect(alerts).To(HaveKey("CredoAccessAPIUnavailable"))
	g.Expect(alerts).To(HaveKey("CredoNamespaceDeletionBlocked"))
}

func TestEveryRunbookURLPointsAtASectionOfTheMonitoringDoc(t *testing.T) {
	g := NewWithT(t)
	var rules ruleFile
	g.Expect(yaml.UnmarshalStrict(monitoringFile(t, "prometheus-rules.yaml"), &rules)).To(Succeed())
	doc, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", "monitoring.md"))
	g.Expect(err).NotTo(HaveOccurred())
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "#") {
			anchors[slug(strings.TrimLeft(line, "# "))] = true
		}
	}
	for _, group := range rules.Spec.Groups {
		for _, r := range group.Rules {
			url := r.Annotations["runbook_url"]
			g.Expect(url).To(HavePrefix("https://github.com/credo-dev/credo/blob/main/docs/monitoring.md#"))
			anchor := url[strings.Index(url, "#")+1:]
			g.Expect(anchor).To(Equal(slug(r.Alert)))
			g.Expect(anchors).To(HaveKey(anchor), "docs/monitoring.md has no section %s", r.Alert)
		}
	}
}

// slug is the anchor a Markdown renderer gives a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestTheKubeStateMetricsConfigServesEveryCredoKindWithReadyAndSuspend(t *testing.T) {
	g := NewWithT(t)
	var cfg ksmConfig
	g.Expect(yaml.UnmarshalStrict(monitoringFile(t, "kube-state-metrics.yaml"), &cfg)).To(Succeed())
	g.Expect(cfg.Kind).To(Equal("CustomResourceStateMetrics"))
	withSuspend := map[string]bool{"TrustAnchor": true, "TrustSource": true, "CredentialAccount": true, "AccountSource": true}
	withReady := map[string]bool{"TrustAnchor": true, "TrustSource": true, "CredentialAccount": true, "AccountSource": true,
		"EnrollmentPolicy": true, "Workload": true}
	kinds := map[string]bool{}
	for _, r := range cfg.Spec.Resources {
		kind := r.GroupVersionKind.Kind
		kinds[kind] = true
		g.Expect(r.GroupVersionKind.Group).To(HaveSuffix(".credo.dev"))
		g.Expect(r.GroupVersionKind.Version).To(Equal("v1alpha1"))
		g.Expect(r.MetricNamePrefix).NotTo(BeNil())
		g.Expect(*r.MetricNamePrefix).To(Equal("credo_"+strings.ToLower(kind)), "one prefix per kind, so that no two resources share a metric name")
		info := r.Metrics[0]
		g.Expect(info.Name).To(Equal("resource_info"))
		g.Expect(info.Each.Type).To(Equal("Info"))
		g.Expect(info.Each.Info.LabelsFromPath).To(HaveKeyWithValue("name", []string{"metadata", "name"}))
		if withReady[kind] {
			g.Expect(info.LabelsFromPath).To(HaveKeyWithValue("ready", []string{"status", "conditions", "[type=Ready]", "status"}), kind)
			g.Expect(info.LabelsFromPath).To(HaveKeyWithValue("reason", []string{"status", "conditions", "[type=Ready]", "reason"}), kind)
		}
		if withSuspend[kind] {
			g.Expect(info.LabelsFromPath).To(HaveKeyWithValue("suspended", []string{"spec", "suspend"}), kind)
		}
		for _, m := range r.Metrics {
			for l, path := range m.LabelsFromPath {
				g.Expect(strings.Join(path, ".")).NotTo(MatchRegexp(`(?i)secret(hash)?$|password|key$|token$`),
					"label %s of %s reads a field that may hold secret material", l, kind)
			}
		}
	}
	g.Expect(kinds).To(HaveLen(7))
	for _, kind := range []string{"TrustAnchor", "TrustSource", "CredentialAccount", "AccountSource", "EnrollmentPolicy", "Workload", "JoinToken"} {
		g.Expect(kinds).To(HaveKey(kind))
	}
}
