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

// Package bench holds benchmarks that run credo's binaries as processes
// against the local control plane and measure them from the outside.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

const tenantCALabel = "internal.cozystack.io/tenant-ca"

// BenchmarkTrustControllerRSS runs the trust-controller binary (bin/, built
// by make build) and reports its resident memory at four moments: idle (no
// release), with CREDO_BENCH_RELEASES (default 100) published CAs projected,
// after CREDO_BENCH_UNRELATED (default 10,000) unrelated 10 KiB Secrets, and
// after one source rotated. Secrets are cached as metadata only, so their
// data must not show up in the controller's memory. With
// CREDO_BENCH_PROFILES set to a directory, the process's heap profile
// (/debug/pprof/heap on its metrics port, after a GC) is saved there at
// each moment, for go tool pprof.
func BenchmarkTrustControllerRSS(b *testing.B) {
	unrelated := envInt("CREDO_BENCH_UNRELATED", 10000)
	releases := envInt("CREDO_BENCH_RELEASES", 100)
	binary := filepath.Join(controlplane.RepoRoot(), "bin", "trust-controller")
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("%s missing (run make build): %v", binary, err)
	}
	ctx := context.Background()
	env := testenv.ControlPlane(b, controlplane.Options{NoControllerManager: true})

	health, metricsAddr := testenv.FreeAddr(b), testenv.FreeAddr(b)
	proc, err := env.StartProcess("trust-controller", binary, []string{"GOMAXPROCS=2"},
		"--metrics-addr="+metricsAddr, "--health-addr="+health)
	if err != nil {
		b.Fatal(err)
	}
	waitReady(b, "http://"+health+"/readyz")
	measure := func(moment string) int {
		time.Sleep(5 * time.Second)
		rss := medianRSS(b, proc.PID())
		b.ReportMetric(float64(rss)/1024, "rss-"+moment+"-MiB")
		// The part of it that is the binary's own pages, mapped from its file.
		b.ReportMetric(float64(statusKiB(b, proc.PID(), "RssFile:"))/1024, "rss-file-"+moment+"-MiB")
		saveHeapProfile(b, metricsAddr, moment)
		return rss
	}
	idle := measure("idle")

	ns := "tenant-bench"
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	for i := range releases {
		publish(b, env.Client, ns, fmt.Sprintf("app-%04d", i))
	}
	waitProjections(b, env.Client, ns, releases)
	withReleases := measure("releases")

	payload := bytes.Repeat([]byte("x"), 10*1024)
	createConcurrently(b, unrelated, func(i int) error {
		return env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: ns},
			Data:       map[string][]byte{"blob": payload},
		})
	})
	// Give the informers time to receive every event before reading.
	time.Sleep(5 * time.Second)
	withUnrelated := measure("unrelated")

	rotate(b, env.Client, ns, "app-0000")
	measure("rotated")
	if err := proc.FailIfExited(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(withReleases-idle)/1024*1000/float64(max(releases, 1)), "MiB-per-1000-releases")
	b.ReportMetric(float64(withUnrelated-withReleases)/1024*10000/float64(max(unrelated, 1)), "MiB-per-10000-unrelated")
	b.ReportMetric(float64(unrelated)*10/1024, "unrelated-data-MiB")
}

// rotate gives release's source a new CA certificate and waits until the
// projection carries it.
func rotate(b *testing.B, c client.Client, ns, release string) {
	ctx := context.Background()
	ca, err := testpki.NewCA("rotated CA", testpki.NotAfter(time.Now().Add(24*time.Hour)))
	must(b, err)
	var src corev1.Secret
	must(b, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-ca"}, &src))
	src.Data["ca.crt"] = ca.CertPEM()
	must(b, c.Update(ctx, &src))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var p corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + ".tenant-ca"}, &p); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return bytes.Equal(p.Data["ca.crt"], ca.CertPEM()), nil
	})
	must(b, err)
}

// saveHeapProfile saves the heap profile of the process serving metrics
// on addr to $CREDO_BENCH_PROFILES/trust-controller-<moment>.heap.
func saveHeapProfile(b *testing.B, addr, moment string) {
	dir := os.Getenv("CREDO_BENCH_PROFILES")
	if dir == "" {
		return
	}
	// The profile for pprof, and its text form, which ends with the
	// runtime's MemStats (heap in use, idle, released, stacks, GC target).
	for suffix, query := range map[string]string{".heap": "gc=1", ".heap.txt": "debug=1"} {
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap?" + query) //nolint:gosec // loopback
		must(b, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		must(b, err)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("heap profile: %s", resp.Status)
		}
		must(b, os.WriteFile(filepath.Join(dir, "trust-controller-"+moment+suffix), raw, 0o600))
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func publish(b *testing.B, c client.Client, ns, release string) {
	ctx := context.Background()
	must(b, c.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "app",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}}},
	}))
	must(b, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-ca", Namespace: ns, Labels: map[string]string{
			"internal.cozystack.io/publish-ca-cert": "true", "internal.cozystack.io/publish-ca-cert-release": release}},
		Data: map[string][]byte{"ca.crt": testCert},
	}))
}

func waitProjections(b *testing.B, c client.Client, ns string, n int) {
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{tenantCALabel: "true"}); err != nil {
			return false, err
		}
		return len(list.Items) == n, nil
	})
	must(b, err)
}

func createConcurrently(b *testing.B, n int, create func(i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := create(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// medianRSS reads VmRSS (KiB) five times, a second apart, and returns the median.
func medianRSS(b *testing.B, pid int) int {
	var samples []int
	for i := 0; i < 5; i++ {
		samples = append(samples, statusKiB(b, pid, "VmRSS:"))
		time.Sleep(time.Second)
	}
	sort.Ints(samples)
	return samples[len(samples)/2]
}

// statusKiB reads one field (KiB) of /proc/<pid>/status.
func statusKiB(b *testing.B, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(b, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			v, err := strconv.Atoi(f[1])
			must(b, err)
			return v
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func waitReady(b *testing.B, url string) {
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url) //nolint:gosec // loopback probe
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	must(b, err)
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
