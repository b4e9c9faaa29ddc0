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

package manager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/credo-dev/credo/internal/version"
)

// unreachableKubeconfig points KUBECONFIG at an API server nobody serves:
// New builds its manager without contacting it.
func unreachableKubeconfig(t *testing.T) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", p)
}

// buildInfo returns the credo_build_info series of reg's families.
func buildInfo(g Gomega, reg prometheus.Gatherer) []*dto.Metric {
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() == BuildInfoMetric {
			g.Expect(mf.GetType()).To(Equal(dto.MetricType_GAUGE))
			return mf.GetMetric()
		}
	}
	return nil
}

// The manager every controller binary builds serves credo_build_info on
// controller-runtime's registry, the one its metrics endpoint serves.
func TestNewServesBuildInfo(t *testing.T) {
	g := NewWithT(t)
	unreachableKubeconfig(t)
	opts, _ := parse(t, "--metrics-addr=0", "--health-addr=0")
	setup, err := New("trust-controller", NewScheme(), *opts, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(setup.Manager).NotTo(BeNil())

	series := buildInfo(g, crmetrics.Registry)
	g.Expect(series).To(HaveLen(1))
	v := version.Get()
	labels := map[string]string{}
	for _, lp := range series[0].GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	g.Expect(labels).To(Equal(map[string]string{"version": v.Version, "commit": v.Commit, "goversion": v.GoVersion}))
	g.Expect(series[0].GetGauge().GetValue()).To(Equal(1.0))
}

func TestBuildInfoIsOneWithTheBuildAsLabels(t *testing.T) {
	g := NewWithT(t)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(BuildInfo(version.Info{Version: "v0.1.0", Commit: sha, GoVersion: "go1.26.8"}))
	g.Expect(testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP credo_build_info A metric with a constant '1' value labeled by the version, commit and Go version the credo binary was built with.
# TYPE credo_build_info gauge
credo_build_info{commit="`+sha+`",goversion="go1.26.8",version="v0.1.0"} 1
`), BuildInfoMetric)).To(Succeed())
}

func TestAnnounceBuildLogsOnceAndRegistersOnce(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	reg := prometheus.NewPedanticRegistry()

	g.Expect(announceBuild(log, reg, "credential-controller")).To(Succeed())
	g.Expect(lines).To(HaveLen(1))
	v := version.Get()
	for _, kv := range []string{`"binary"="credential-controller"`, `"version"="` + v.Version + `"`,
		`"commit"="` + v.Commit + `"`, `"goversion"="` + v.GoVersion + `"`} {
		g.Expect(lines[0]).To(ContainSubstring(kv))
	}
	g.Expect(announceBuild(log, reg, "credential-controller")).To(Succeed(), "a gauge registered before is kept")
	g.Expect(buildInfo(g, reg)).To(HaveLen(1))
	g.Expect(lines).To(HaveLen(2), "one line per call")
}

func TestVersionFlag(t *testing.T) {
	g := NewWithT(t)
	o, _ := parse(t, "--version")
	g.Expect(o.Version).To(BeTrue())
	o, _ = parse(t)
	g.Expect(o.Version).To(BeFalse())
}
