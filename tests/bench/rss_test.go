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
)

const tenantCALabel = "internal.cozystack.io/tenant-ca"

// BenchmarkTrustControllerRSS runs the trust-controller binary (bin/, built
// by make build) with 100 published CAs, then adds CREDO_BENCH_UNRELATED
// (default 10,000) unrelated 10 KiB Secrets, and reports the process's
// resident memory before and after. Secrets are cached as metadata only, so
// their data must not show up in the controller's memory.
func BenchmarkTrustControllerRSS(b *testing.B) {
	unrelated := 10000
	if v, err := strconv.Atoi(os.Getenv("CREDO_BENCH_UNRELATED")); err == nil && v >= 0 {
		unrelated = v
	}
	binary := filepath.Join(controlplane.RepoRoot(), "bin", "trust-controller")
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("%s missing (run make build): %v", binary, err)
	}
	ctx := context.Background()
	env, err := controlplane.Start(ctx, controlplane.Options{NoControllerManager: true})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Stop()

	health := testenv.FreeAddr(b)
	proc, err := env.StartProcess("trust-controller", binary, []string{"GOMAXPROCS=2"},
		"--metrics-addr=0", "--health-addr="+health)
	if err != nil {
		b.Fatal(err)
	}
	waitReady(b, "http://"+health+"/readyz")

	ns := "tenant-bench"
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	const releases = 100
	for i := 0; i < releases; i++ {
		publish(b, env.Client, ns, fmt.Sprintf("app-%03d", i))
	}
	waitProjections(b, env.Client, ns, releases)
	before := medianRSS(b, proc.PID())

	payload := bytes.Repeat([]byte("x"), 10*1024)
	createConcurrently(b, unrelated, func(i int) error {
		return env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: ns},
			Data:       map[string][]byte{"blob": payload},
		})
	})
	// Give the informers time to receive every event, then let the
	// collector run before reading.
	time.Sleep(10 * time.Second)
	after := medianRSS(b, proc.PID())
	if err := proc.FailIfExited(); err != nil {
		b.Fatal(err)
	}

	b.ReportMetric(float64(before)/1024, "rss-before-MiB")
	b.ReportMetric(float64(after)/1024, "rss-after-MiB")
	b.ReportMetric(float64(after-before)/1024, "rss-growth-MiB")
	b.ReportMetric(float64(unrelated)*10/1024, "unrelated-data-MiB")
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
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		must(b, err)
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				v, err := strconv.Atoi(f[1])
				must(b, err)
				samples = append(samples, v)
			}
		}
		time.Sleep(time.Second)
	}
	sort.Ints(samples)
	return samples[len(samples)/2]
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
