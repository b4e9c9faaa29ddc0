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
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DurationSamples returns how many reconciles of the object the suite's
// gotk_reconcile_duration_seconds holds, and whether it has a series at all.
func (e *Env) DurationSamples(g Gomega, kind, ns, name string) (uint64, bool) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Setup.Metrics.Collectors()...)
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() != "gotk_reconcile_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, map[string]string{"kind": kind, "namespace": ns, "name": name}) {
				return m.GetHistogram().GetSampleCount(), true
			}
		}
	}
	return 0, false
}

// CounterValue reads a credo counter from controller-runtime's registry,
// where the binaries serve it; 0 when it has no series with labels.
func CounterValue(g Gomega, name string, labels map[string]string) float64 {
	families, err := crmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Scrape reads the metrics endpoint of a controller binary running as a
// process, http://<addr>/metrics, as Prometheus scrapes it.
func Scrape(addr string) (map[string]*dto.MetricFamily, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// ScrapedCounter is the sum of the counter name's series that carry labels
// (and maybe others), out of a Scrape; 0 when it has none.
func ScrapedCounter(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var sum float64
	for _, m := range families[name].GetMetric() {
		if hasLabels(m, labels) {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// CredoLabelValues returns every label value of every credo_ series in
// controller-runtime's registry: what a scrape shows, to be searched for
// secrets, names and addresses that must not be there.
func CredoLabelValues(g Gomega) []string {
	families, err := crmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var values []string
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "credo_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				values = append(values, lp.GetValue())
			}
		}
	}
	return values
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// DurationCase is one kind of the reconcile-duration check: Create makes a
// new object of Kind in namespace ns.
type DurationCase struct {
	Kind   string
	Create func(t *testing.T, ns string) client.Object
}

// RecordsDurationAndDropsIt checks, for each case in parallel in a
// namespace of its own, that a reconcile of a new object is recorded in
// gotk_reconcile_duration_seconds and that the object's series is dropped
// once it is deleted, as every reconciler does.
func (e *Env) RecordsDurationAndDropsIt(t *testing.T, cases []DurationCase) {
	for _, tc := range cases {
		t.Run(tc.Kind, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ns := e.NewNamespace(t)
			obj := tc.Create(t, ns)
			t.Cleanup(func() { _ = e.Client.Delete(context.Background(), obj) })

			g.Eventually(func() uint64 {
				n, _ := e.DurationSamples(g, tc.Kind, obj.GetNamespace(), obj.GetName())
				return n
			}, 30*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1),
				"a reconcile of the %s is recorded in gotk_reconcile_duration_seconds", tc.Kind)

			g.Expect(e.Client.Delete(context.Background(), obj)).To(Succeed())
			g.Eventually(func() bool {
				_, found := e.DurationSamples(g, tc.Kind, obj.GetNamespace(), obj.GetName())
				return found
			}, 30*time.Second, 100*time.Millisecond).Should(BeFalse(),
				"the series of the deleted %s is dropped", tc.Kind)
		})
	}
}
