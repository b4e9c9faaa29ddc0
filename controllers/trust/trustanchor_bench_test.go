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
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// benchNamespaceLabel marks the namespaces the benchmark's own manager
// serves; the suite's manager leaves them alone.
const benchNamespaceLabel = "credo.dev/bench"

// BenchmarkTrustAnchor measures, for N releases (CREDO_BENCH_RELEASES,
// default 1000) on the real control plane, with a trust-controller manager
// built by Setup as cmd/trust-controller builds it, reconciling
// CREDO_BENCH_CONCURRENT releases at once (default DefaultConcurrent, the
// flag's default):
//   - cold-start-s: from the manager starting with N labelled sources and
//     HelmReleases in place, until all N projections exist; and what one
//     release cost until the controller was idle (api-requests/cold-start-release,
//     *-cpu-ms/cold-start-release);
//   - fanout-s: from updating all N sources at once (16 writers) until all
//     N projections changed; and the cost per release until idle
//     (api-requests/fanout-release, which counts the benchmark's own PUT of
//     the source);
//   - rotation p50-ms / p99-ms: from updating one source to seeing its
//     projection change through a watch, over b.N rotations; and the cost
//     per rotation until idle (api-requests/rotation, which counts the
//     benchmark's own PUT of the source).
//
// The requests per operation by verb and resource are logged (-v).
func BenchmarkTrustAnchor(b *testing.B) {
	if bench == nil {
		bench = setUpBench(b)
	}
	rotation := rotate(b, bench)
	// After rotate: ResetTimer discards metrics reported before it.
	b.ReportMetric(bench.coldStart.Seconds(), "cold-start-s")
	b.ReportMetric(bench.fanOut.Seconds(), "fanout-s")
	b.ReportMetric(float64(len(bench.sources)), "releases")
	bench.coldStartCost.Report(b, "cold-start-release")
	bench.fanOutCost.Report(b, "fanout-release")
	rotation.Report(b, "rotation")
}

// benchState is set up once per process: the benchmark function runs more
// than once (b.N=1 first), and the fleet of releases is the expensive part.
type benchState struct {
	ctx                       context.Context
	ns                        string
	sources                   []*corev1.Secret
	coldStart, fanOut         time.Duration
	coldStartCost, fanOutCost benchcost.Cost
	watch                     watch.Interface
	rotations                 int
}

var bench *benchState

func setUpBench(b *testing.B) *benchState {
	n := envInt("CREDO_BENCH_RELEASES", 1000)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-", Labels: map[string]string{benchNamespaceLabel: "true"}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	sources := make([]*corev1.Secret, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("app-%04d", i)
		newHelmReleaseB(b, ns.Name, name)
		cert, _ := testpki.CA(b, name)
		sources[i] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-ca", Namespace: ns.Name, Labels: testKeys.PublishLabels(name)},
			Data: map[string][]byte{"ca.crt": cert}}
		if err := env.Client.Create(ctx, sources[i]); err != nil {
			b.Fatal(err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	w, err := cs.CoreV1().Secrets(ns.Name).Watch(ctx, metav1.ListOptions{LabelSelector: labels.Set{testKeys.TenantCA: "true"}.String()})
	if err != nil {
		b.Fatal(err)
	}
	s := &benchState{ctx: ctx, ns: ns.Name, sources: sources, watch: w}

	m := benchcost.Start(b, env.Config)
	start := time.Now()
	startBenchManager(ctx, b, envInt("CREDO_BENCH_CONCURRENT", DefaultConcurrent)) // runs until the test process ends
	waitProjections(b, w, projectionsOf(sources))
	s.coldStart = time.Since(start)
	waitIdle(b)
	s.coldStartCost = m.Stop(b, n)

	// All sources rotated at once, by 16 writers.
	want := map[string][]byte{}
	certs := make([][]byte, n)
	for i, src := range sources {
		certs[i], _ = testpki.CA(b, "fanout-"+src.Name)
		want[benchProjection(src)] = certs[i]
	}
	m = benchcost.Start(b, env.Config)
	start = time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				sources[i].Data["ca.crt"] = certs[i]
				if err := env.Client.Update(ctx, sources[i]); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range sources {
		next <- i
	}
	close(next)
	wg.Wait()
	waitProjections(b, w, want)
	s.fanOut = time.Since(start)
	waitIdle(b)
	s.fanOutCost = m.Stop(b, n)
	return s
}

// rotate updates b.N sources one after the other, reports the latency
// from each update to its projection's change, seen by watch, and returns
// the cost of a rotation.
func rotate(b *testing.B, s *benchState) benchcost.Cost {
	ctx, n, w := s.ctx, len(s.sources), s.watch
	certs := make([][]byte, b.N)
	for i := range certs {
		certs[i], _ = testpki.CA(b, fmt.Sprintf("rotated-%d", s.rotations+i))
	}
	sources := s.sources
	latencies := make([]time.Duration, 0, b.N)
	m := benchcost.Start(b, env.Config)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := sources[(s.rotations+i)%n]
		src.Data["ca.crt"] = certs[i]
		t0 := time.Now()
		if err := env.Client.Update(ctx, src); err != nil {
			b.Fatal(err)
		}
		waitProjections(b, w, map[string][]byte{benchProjection(src): certs[i]})
		latencies = append(latencies, time.Since(t0))
	}
	b.StopTimer()
	waitIdle(b)
	cost := m.Stop(b, b.N)
	s.rotations += b.N
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[(len(latencies)*99)/100].Microseconds())/1000, "p99-ms")
	return cost
}

// benchProjection is the name of the projection of a benchmark source.
func benchProjection(src *corev1.Secret) string {
	return src.Name[:len(src.Name)-len("-ca")] + trustv1.ProjectionSuffix
}

// projectionsOf wants every source's projection, whatever it holds.
func projectionsOf(sources []*corev1.Secret) map[string][]byte {
	out := make(map[string][]byte, len(sources))
	for _, src := range sources {
		out[benchProjection(src)] = nil
	}
	return out
}

// waitProjections waits until each projection named in want has been seen
// on w holding want's ca.crt (any, when nil).
func waitProjections(b *testing.B, w watch.Interface, want map[string][]byte) {
	left := len(want)
	seen := make(map[string]bool, left)
	timeout := time.After(4 * time.Minute)
	for left > 0 {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				b.Fatalf("the watch of projections closed with %d of %d not seen", left, len(want))
			}
			s, ok := ev.Object.(*corev1.Secret)
			if !ok || seen[s.Name] {
				continue
			}
			if v, ok := want[s.Name]; ok && (v == nil || bytes.Equal(s.Data["ca.crt"], v)) {
				seen[s.Name] = true
				left--
			}
		case <-timeout:
			missing := []string{}
			for name := range want {
				if !seen[name] && len(missing) < 5 {
					missing = append(missing, name)
				}
			}
			b.Fatalf("%d of %d projections not seen within 4m, e.g. %v", left, len(want), missing)
		}
	}
}

// waitIdle waits until the trustanchor controllers have had nothing queued
// and nothing running for a second, then a second more for the events the
// recorder sends asynchronously.
func waitIdle(b *testing.B) {
	var idleSince time.Time
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if busy(b) {
			idleSince = time.Time{}
			continue
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		if time.Since(idleSince) > time.Second {
			time.Sleep(time.Second)
			return
		}
	}
	b.Fatal("the trustanchor controller was still busy after 3m")
}

// busy reports whether a trustanchor controller has a request queued or
// being reconciled, from controller-runtime's registry.
func busy(b *testing.B) bool {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "workqueue_depth" && mf.GetName() != "controller_runtime_active_workers" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "trustanchor" && m.GetGauge().GetValue() > 0 {
					return true
				}
			}
		}
	}
	return false
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func newHelmReleaseB(b *testing.B, ns, name string) {
	hr := testenv.HelmReleaseObject(ns, name, "bench", nil)
	if err := env.Client.Create(context.Background(), hr); err != nil {
		b.Fatal(err)
	}
}

// startBenchManager starts a trust-controller manager serving only the
// benchmark's namespaces, built by Setup with ConfigureCache as
// cmd/trust-controller builds it.
func startBenchManager(ctx context.Context, b *testing.B, concurrent int) {
	setup, err := testenv.NewSetup(env.Config, env.Scheme, ControllerName+"-bench", ConfigureCache)
	if err != nil {
		b.Fatal(err)
	}
	if err := Setup(ctx, setup, Options{
		LabelDomain:         testDomain,
		NamespaceSelector:   benchNamespaceLabel + "=true",
		ExpiryWarningWindow: 30 * 24 * time.Hour,
		Concurrent:          concurrent,
	}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = setup.Manager.Start(ctx) }()
}
