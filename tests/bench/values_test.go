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
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// BenchmarkReleaseValuesRSS runs the trust-controller and the
// credential-controller binaries (bin/, built by make build), unsharded as
// the shipped Deployments run them, and reports the resident memory of
// each before and after CREDO_BENCH_VALUES_RELEASES (default 30) suspended
// HelmReleases carrying CREDO_BENCH_VALUES_KIB (default 1,024) KiB of
// spec.values each are created: a controller that caches releases whole
// holds every tenant's values. An AccountSource derives an account from
// each release's users map, so that the credential-controller reads the
// values it needs. Resident memory is the median of five reads of VmRSS a
// second apart, 10 s after every release's account exists; the live heap
// (go_memstats_heap_alloc_bytes right after a collection, which
// /debug/pprof/heap?gc=1 forces) is read after it: what the caches hold,
// whether or not the runtime has returned the garbage of decoding the
// releases to the system yet. CREDO_BENCH_VALUES_PER_NAMESPACE (default
// 500, under --max-generated-accounts-per-namespace) spreads the releases
// over namespaces, so that thousands of small releases measure the memory
// a release costs (heap-per-1000-releases-MiB).
func BenchmarkReleaseValuesRSS(b *testing.B) {
	n := envInt("CREDO_BENCH_VALUES_RELEASES", 30)
	kib := envInt("CREDO_BENCH_VALUES_KIB", 1024)
	perNS := max(envInt("CREDO_BENCH_VALUES_PER_NAMESPACE", 500), 1)
	ctx := context.Background()
	env := testenv.ControlPlane(b, controlplane.Options{NoControllerManager: true})
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}}))
	names := []string{"trust-controller", "credential-controller"}
	procs := []*valuesProc{
		startController(b, env, names[0]),
		startController(b, env, names[1], "--access-api-secure-port=0"),
	}
	// measure returns each process's resident memory and live heap, MiB.
	measure := func() (rss, heap []float64) {
		for _, p := range procs {
			rss = append(rss, float64(medianRSS(b, p.proc.PID()))/1024)
		}
		for _, p := range procs {
			heap = append(heap, liveHeapMiB(b, p.metrics))
		}
		return rss, heap
	}

	nsOf := func(i int) string { return fmt.Sprintf("tenant-values-%03d", i/perNS) }
	app := map[string]string{"app": "values-bench"}
	for i := 0; i < n; i += perNS {
		must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsOf(i)}}))
	}
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "values-bench"},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: app},
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceValuesMap, ValuesMap: &credv1.ValuesMapSource{Path: "users"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "sha256-hex"}}}},
		},
	}
	must(b, env.Client.Create(ctx, src))
	time.Sleep(5 * time.Second)
	base, baseHeap := measure()

	values := bigValues(kib)
	createConcurrently(b, n, func(i int) error {
		return env.Client.Create(ctx, &helmv2.HelmRelease{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", i), Namespace: nsOf(i), Labels: app},
			Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour}, Suspend: true,
				Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "app",
					SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}},
				Values: &apiextensionsv1.JSON{Raw: values}},
		})
	})
	must(b, wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list credv1.CredentialAccountList
		if err := env.Client.List(ctx, &list, client.MatchingLabels{credv1.SourceLabel: src.Name}); err != nil {
			return false, err
		}
		return len(list.Items) == n, nil
	}))
	time.Sleep(10 * time.Second) // every event reaches the informers
	with, withHeap := measure()

	b.ReportMetric(float64(n)*float64(kib)/1024, "values-MiB")
	for i, name := range names {
		short := strings.TrimSuffix(name, "-controller")
		b.ReportMetric(base[i], short+"-rss-base-MiB")
		b.ReportMetric(with[i], short+"-rss-values-MiB")
		b.ReportMetric(with[i]-base[i], short+"-rss-growth-MiB")
		b.ReportMetric(baseHeap[i], short+"-heap-base-MiB")
		b.ReportMetric(withHeap[i]-baseHeap[i], short+"-heap-growth-MiB")
		b.ReportMetric((withHeap[i]-baseHeap[i])*1000/float64(max(n, 1)), short+"-heap-per-1000-releases-MiB")
	}
	for _, p := range procs {
		if err := p.proc.FailIfExited(); err != nil {
			b.Fatal(err)
		}
	}
}

// valuesProc is one controller process under measurement.
type valuesProc struct {
	proc    *controlplane.Process
	metrics string
}

// startController runs bin/<name> unsharded and waits until it is ready.
func startController(b *testing.B, env *controlplane.Environment, name string, extra ...string) *valuesProc {
	binary := filepath.Join(controlplane.RepoRoot(), "bin", name)
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("%s missing (run make build): %v", binary, err)
	}
	health, metrics := testenv.FreeAddr(b), testenv.FreeAddr(b)
	args := append([]string{"--metrics-addr=" + metrics, "--health-addr=" + health}, extra...)
	p, err := env.StartProcess(name, binary, []string{"GOMAXPROCS=2"}, args...)
	if err != nil {
		b.Fatal(err)
	}
	waitReady(b, "http://"+health+"/readyz")
	return &valuesProc{proc: p, metrics: metrics}
}

// liveHeapMiB forces a collection in the process serving metrics on addr
// (through its heap profile) and reads its heap in use right after.
func liveHeapMiB(b *testing.B, addr string) float64 {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?gc=1") //nolint:gosec // loopback
	must(b, err)
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	must(b, err)
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("heap profile: %s", resp.Status)
	}
	v, ok := scrape(b, "http://"+addr+"/metrics")["go_memstats_heap_alloc_bytes"]
	if !ok {
		b.Fatal("no go_memstats_heap_alloc_bytes in the metrics")
	}
	return v / (1 << 20)
}

// bigValues is a release's spec.values of about kib KiB: a users map of
// one user (app), and configuration strings of 1 KiB each.
func bigValues(kib int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"users":{"app":{}},"config":{`)
	line := strings.Repeat("x", 1000)
	for i := range max(kib, 1) {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%05d":%q`, i, line)
	}
	sb.WriteString(`}}`)
	return []byte(sb.String())
}
