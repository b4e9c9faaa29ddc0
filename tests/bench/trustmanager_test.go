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

package bench

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/latency"
	"github.com/credo-dev/credo/tests/testpki"
)

// BenchmarkTrustManager runs trust-manager, the peer credo's
// trust-controller is measured against, built from its public source
// (CREDO_BENCH_TRUST_MANAGER names the binary; make bench-peers builds it
// with hack/build-trust-manager.sh, which puts its CRDs beside it in
// crds/), as a process on a fresh control plane, and measures it as
// BenchmarkTrustAnchor and BenchmarkTrustControllerRSS measure credo's:
// N = CREDO_BENCH_RELEASES (default 1000) Bundles, each with one source
// Secret (a fresh ECDSA CA under ca.crt) in the trust namespace and one
// Secret target (key ca.crt) in a namespace only it selects (see tmLayout
// for the one-namespace layout of credo's benchmarks).
//
// Sub-benchmarks, under one named after the binary:
//   - cold-start: cold-start-s, from starting trust-manager with the N
//     sources, Bundles and namespaces in place until all N targets exist,
//     seen by a watch; and what one Bundle cost until it was idle
//     (api-requests/cold-start-release, *-cpu-ms/cold-start-release);
//   - fanout: fanout-s, from updating all N sources at once (16 writers)
//     until every target holds its new certificate; the cost per Bundle,
//     the benchmark's own PUT of the source counted;
//   - rotate: p50-ms / p99-ms from updating one source to seeing its target
//     hold the new certificate, over b.N rotations, and the cost per
//     rotation, the benchmark's PUT counted;
//   - rss: on a control plane of its own, trust-manager's VmRSS (median of
//     five reads a second apart) idle (no Bundle), with the N Bundles
//     projected (created while it runs), after CREDO_BENCH_UNRELATED
//     (default 10,000) unrelated 10 KiB Secrets in a target namespace, and
//     after one source rotated.
//
// "Idle" is the Bundle controller's work queue empty, no reconcile running
// and no request sent by the process for a second. The CPU per operation is
// kube-apiserver's, etcd's, trust-manager's and this process's (the driver).
// The first three parts share one control plane and process, the order of
// BenchmarkTrustAnchor's (cold start, fan-out, rotations), which is stopped
// before rss starts its own, as BenchmarkTrustControllerRSS does.
func BenchmarkTrustManager(b *testing.B) {
	binary := os.Getenv("CREDO_BENCH_TRUST_MANAGER")
	if binary == "" {
		b.Skip("CREDO_BENCH_TRUST_MANAGER names no trust-manager binary: run make bench-peers, which builds one with hack/build-trust-manager.sh")
	}
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("CREDO_BENCH_TRUST_MANAGER: %v (hack/build-trust-manager.sh builds trust-manager)", err)
	}
	crds := filepath.Join(filepath.Dir(binary), "crds")
	if _, err := os.Stat(crds); err != nil {
		b.Fatalf("trust-manager's CRDs: %v (hack/build-trust-manager.sh copies them beside the binary)", err)
	}
	s := &tmBench{binary: binary, crds: crds, n: envInt("CREDO_BENCH_RELEASES", 1000), layout: tmLayoutFromEnv(b)}
	if s.n < 1 {
		b.Fatal("CREDO_BENCH_RELEASES must be at least 1")
	}
	b.Cleanup(s.stop)
	name := filepath.Base(binary)
	if !s.layout.perNamespace {
		name += "-one-namespace"
	}
	b.Run(name, func(b *testing.B) {
		b.Run("cold-start", s.coldStartBench)
		b.Run("fanout", s.fanOutBench)
		b.Run("rotate", s.rotateBench)
		s.stop()
		b.Run("rss", s.rssBench)
	})
}

// tmBench is the state the sub-benchmarks share: each runs more than once
// (b.N=1 first), and what it measures once is kept and reported again.
type tmBench struct {
	binary, crds string
	n            int
	layout       tmLayout

	env       *controlplane.Environment
	proc      *tmProc
	watch     watch.Interface
	sources   []*corev1.Secret
	rotations int

	coldStart, fanOut         time.Duration
	coldStartCost, fanOutCost *benchcost.Cost
	rss                       map[string]float64
}

func (s *tmBench) coldStartBench(b *testing.B) {
	s.setUp(b)
	b.ReportMetric(s.coldStart.Seconds(), "cold-start-s")
	b.ReportMetric(float64(s.n), "releases")
	s.coldStartCost.Report(b, "cold-start-release")
}

func (s *tmBench) fanOutBench(b *testing.B) {
	s.fanOutOnce(b)
	b.ReportMetric(s.fanOut.Seconds(), "fanout-s")
	b.ReportMetric(float64(s.n), "releases")
	s.fanOutCost.Report(b, "fanout-release")
}

// setUp starts the control plane, creates the N namespaces, sources and
// Bundles, then starts trust-manager and measures its cold start.
func (s *tmBench) setUp(b *testing.B) {
	if s.env != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := controlplane.Start(ctx, controlplane.Options{NoControllerManager: true,
		CRDPaths: append(controlplane.CRDPaths(), s.crds)})
	if err != nil {
		b.Fatalf("starting the control plane: %v", err)
	}
	s.env = env
	createTrustNamespaces(b, env.Client, s.layout)
	s.sources = make([]*corev1.Secret, s.n)
	want := make(map[string][]byte, s.n)
	createConcurrently(b, s.n, func(i int) error {
		ca, err := testpki.NewCA(tmName(i))
		if err != nil {
			return err
		}
		s.sources[i], err = createBundle(context.Background(), env.Client, s.layout, tmName(i), ca.CertPEM())
		return err
	})
	for i := range s.n {
		want[s.layout.target(tmName(i))] = nil
	}
	s.watch = watchTargets(b, env)

	m := benchcost.Start(b, env.Config)
	start := time.Now()
	s.proc = startTrustManager(b, env, s.binary)
	m.Process("trust-manager", s.proc.PID())
	waitTargets(b, s.watch, s.proc, want)
	s.coldStart = time.Since(start)
	s.proc.waitIdle(b)
	cost := m.Stop(b, s.n)
	s.coldStartCost = &cost
}

// fanOutOnce rotates all N sources at once, by 16 writers, and measures
// the time until every target holds its new certificate.
func (s *tmBench) fanOutOnce(b *testing.B) {
	if s.fanOutCost != nil {
		return
	}
	s.setUp(b)
	certs := make([][]byte, s.n)
	want := make(map[string][]byte, s.n)
	for i := range s.sources {
		ca, err := testpki.NewCA("fanout-" + tmName(i))
		must(b, err)
		certs[i] = ca.CertPEM()
		want[s.layout.target(tmName(i))] = certDER(b, certs[i])
	}
	ctx := context.Background()
	m := benchcost.Start(b, s.env.Config)
	m.Process("trust-manager", s.proc.PID())
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				s.sources[i].Data["ca.crt"] = certs[i]
				if err := s.env.Client.Update(ctx, s.sources[i]); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range s.sources {
		next <- i
	}
	close(next)
	wg.Wait()
	waitTargets(b, s.watch, s.proc, want)
	s.fanOut = time.Since(start)
	s.proc.waitIdle(b)
	cost := m.Stop(b, s.n)
	s.fanOutCost = &cost
}

// rotateBench updates b.N sources one after the other and reports the
// latency from each update to its target holding the new certificate, seen
// by the watch, and the cost of a rotation.
func (s *tmBench) rotateBench(b *testing.B) {
	s.setUp(b)
	ctx := context.Background()
	certs := make([][]byte, b.N)
	for i := range certs {
		ca, err := testpki.NewCA("rotated-" + tmName(s.rotations+i))
		must(b, err)
		certs[i] = ca.CertPEM()
	}
	latencies := make([]time.Duration, 0, b.N)
	m := benchcost.Start(b, s.env.Config)
	m.Process("trust-manager", s.proc.PID())
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		k := (s.rotations + i) % s.n
		src := s.sources[k]
		src.Data["ca.crt"] = certs[i]
		t0 := time.Now()
		must(b, s.env.Client.Update(ctx, src))
		waitTargets(b, s.watch, s.proc, map[string][]byte{s.layout.target(tmName(k)): certDER(b, certs[i])})
		latencies = append(latencies, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	s.proc.waitIdle(b)
	cost := m.Stop(b, b.N)
	s.rotations += b.N
	latency.Report(b, latencies, elapsed, "rotations/s")
	b.ReportMetric(float64(s.n), "releases")
	cost.Report(b, "rotation")
}

// stop stops the shared control plane and trust-manager, if started.
func (s *tmBench) stop() {
	if s.watch != nil {
		s.watch.Stop()
		s.watch = nil
	}
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			os.Stderr.WriteString("stopping the control plane: " + err.Error() + "\n")
		}
		s.env = nil
	}
}
