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
	"testing"
	"time"

	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/metrics"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// benchNamespaceLabel marks the namespaces the benchmark's own manager
// serves; the suite's manager leaves them alone.
const benchNamespaceLabel = "credo.dev/bench"

// BenchmarkTrustAnchor measures, for N releases (CREDO_BENCH_RELEASES,
// default 1000) on the real control plane:
//   - cold-start-s: from a new trust-controller manager starting with N
//     labelled sources and HelmReleases in place, until all N projections exist;
//   - rotation p50-ms / p99-ms: from updating one source to seeing its
//     projection change through a watch, over b.N rotations.
func BenchmarkTrustAnchor(b *testing.B) {
	if bench == nil {
		bench = setUpBench(b)
	}
	rotate(b, bench)
	// After rotate: ResetTimer discards metrics reported before it.
	b.ReportMetric(bench.coldStart.Seconds(), "cold-start-s")
	b.ReportMetric(float64(len(bench.sources)), "releases")
}

// benchState is set up once per process: the benchmark function runs more
// than once (b.N=1 first), and the fleet of releases is the expensive part.
type benchState struct {
	ctx       context.Context
	ns        string
	sources   []*corev1.Secret
	coldStart time.Duration
	watch     watch.Interface
	rotations int
}

var bench *benchState

func setUpBench(b *testing.B) *benchState {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("CREDO_BENCH_RELEASES")); err == nil && v > 0 {
		n = v
	}
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

	start := time.Now()
	startBenchManager(ctx, b) // runs until the test process ends
	sel := client.MatchingLabels{testKeys.TenantCA: "true"}
	for {
		var list corev1.SecretList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns.Name), sel); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) == n {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("only %d of %d projections after 10m", len(list.Items), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	coldStart := time.Since(start)

	cs := kubernetes.NewForConfigOrDie(env.Config)
	w, err := cs.CoreV1().Secrets(ns.Name).Watch(ctx, metav1.ListOptions{LabelSelector: labels.Set{testKeys.TenantCA: "true"}.String()})
	if err != nil {
		b.Fatal(err)
	}
	return &benchState{ctx: ctx, ns: ns.Name, sources: sources, coldStart: coldStart, watch: w}
}

// rotate updates b.N sources one after the other and reports the latency
// from each update to its projection's change, seen by watch.
func rotate(b *testing.B, s *benchState) {
	ctx, n, w := s.ctx, len(s.sources), s.watch
	certs := make([][]byte, b.N)
	for i := range certs {
		certs[i], _ = testpki.CA(b, fmt.Sprintf("rotated-%d", s.rotations+i))
	}
	sources := s.sources
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src := sources[(s.rotations+i)%n]
		src.Data["ca.crt"] = certs[i]
		want := src.Name[:len(src.Name)-len("-ca")] + trustv1.ProjectionSuffix
		t0 := time.Now()
		if err := env.Client.Update(ctx, src); err != nil {
			b.Fatal(err)
		}
		waitProjection(b, w, want, certs[i])
		latencies = append(latencies, time.Since(t0))
	}
	b.StopTimer()
	s.rotations += b.N
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[(len(latencies)*99)/100].Microseconds())/1000, "p99-ms")
}

func waitProjection(b *testing.B, w watch.Interface, name string, want []byte) {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			s, ok := ev.Object.(*corev1.Secret)
			if ok && s.Name == name && bytes.Equal(s.Data["ca.crt"], want) {
				return
			}
		case <-timeout:
			b.Fatalf("projection %s not rotated within 30s", name)
		}
	}
}

func newHelmReleaseB(b *testing.B, ns, name string) {
	hr := testenv.HelmReleaseObject(ns, name, "bench", nil)
	if err := env.Client.Create(context.Background(), hr); err != nil {
		b.Fatal(err)
	}
}

// startBenchManager starts a trust-controller manager serving only the
// benchmark's namespaces, configured as cmd/trust-controller configures it.
func startBenchManager(ctx context.Context, b *testing.B) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		// The suite's manager registered a controller of the same name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	recorder, err := events.NewRecorder(ctrl.Log, "", "trust-controller-bench", events.WithManager(mgr))
	if err != nil {
		b.Fatal(err)
	}
	r := &TrustAnchorReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), EventRecorder: recorder,
		Metrics: fluxcontroller.NewMetrics(mgr, metrics.NewRecorder()), Keys: testKeys,
		NamespaceSelector:   labels.SelectorFromSet(labels.Set{benchNamespaceLabel: "true"}),
		ExpiryWarningWindow: 30 * 24 * time.Hour,
	}
	if err := r.SetupWithManager(ctx, mgr, TrustAnchorReconcilerOptions{MaxConcurrentReconciles: 4}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
}
