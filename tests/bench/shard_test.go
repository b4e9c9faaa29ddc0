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
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

const accountLabel = "credentials.cozystack.io/account"

// shardProc is one controller binary of shard1 under measurement.
type shardProc struct {
	name    string
	proc    *controlplane.Process
	metrics string
}

// BenchmarkShard runs the trust-controller and the credential-controller
// binaries (bin/, built by make build) as shard1, then measures, for
// CREDO_BENCH_RELEASES (default 1,000) releases — each a HelmRelease, a
// labelled CA source Secret and a CredentialAccount:
//
//   - what releases of another shard cost a shard (created labelled
//     shard2: resident memory only);
//   - what releases of the shard cost it (created labelled shard1: the
//     time until every projection and account Secret exists, the API
//     requests the controller sent, by verb, and resident memory);
//   - what a restart costs with everything in place (the requests and the
//     time until every release was reconciled once).
//
// Resident memory is the median of five reads of VmRSS a second apart.
// Each controller runs with its default --kube-api-qps (50) and
// --kube-api-burst (300), as deployed.
func BenchmarkShard(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("CREDO_BENCH_RELEASES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	env := testenv.ControlPlane(b, controlplane.Options{NoControllerManager: true})
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}}))
	procs := []*shardProc{
		startShardProc(b, env, "trust-controller"),
		startShardProc(b, env, "credential-controller", "--access-api-secure-port=0"),
	}
	rss := func() []float64 {
		out := make([]float64, len(procs))
		for i, p := range procs {
			out[i] = float64(medianRSS(b, p.proc.PID())) / 1024
		}
		return out
	}
	base := rss()

	ns := "tenant-bench"
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	createConcurrently(b, n, func(i int) error { return createRelease(ctx, env.Client, ns, fmt.Sprintf("other-%05d", i), "shard2") })
	time.Sleep(10 * time.Second) // every event reaches the informers
	other := rss()

	before := make([]map[string]float64, len(procs))
	for i, p := range procs {
		before[i] = scrape(b, p.metrics)
	}
	start := time.Now()
	createConcurrently(b, n, func(i int) error { return createRelease(ctx, env.Client, ns, fmt.Sprintf("own-%05d", i), "shard1") })
	waitLabelled(b, env.Client, ns, tenantCALabel, n)
	waitLabelled(b, env.Client, ns, accountLabel, n)
	coldStart := time.Since(start)
	time.Sleep(5 * time.Second) // the last status patches land
	own := rss()
	created := make([]map[string]float64, len(procs))
	for i, p := range procs {
		created[i] = diff(scrape(b, p.metrics), before[i])
	}

	// A restart: every release is reconciled once with nothing to change.
	restarted := make([]map[string]float64, len(procs))
	var restartTime time.Duration
	for i, p := range procs {
		must(b, p.proc.Stop(10*time.Second))
		start := time.Now()
		args := []string{}
		if p.name == "credential-controller" {
			args = append(args, "--access-api-secure-port=0")
		}
		procs[i] = startShardProc(b, env, p.name, args...)
		controller := map[string]string{"trust-controller": "trustanchor", "credential-controller": "credentialaccount"}[p.name]
		of := `controller="` + controller + `"`
		must(b, wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(context.Context) (bool, error) {
			m := scrape(b, procs[i].metrics)
			return sum(m, "controller_runtime_reconcile_total{", of) >= float64(n) && sum(m, "workqueue_depth{", of) == 0, nil
		}))
		if d := time.Since(start); d > restartTime {
			restartTime = d
		}
		restarted[i] = scrape(b, procs[i].metrics)
	}
	after := rss()

	b.ReportMetric(float64(n), "releases")
	b.ReportMetric(coldStart.Seconds(), "cold-start-s")
	b.ReportMetric(restartTime.Seconds(), "restart-s")
	for i, p := range procs {
		short := strings.TrimSuffix(p.name, "-controller")
		b.ReportMetric(base[i], short+"-rss-base-MiB")
		b.ReportMetric((other[i]-base[i])*1000/float64(n), short+"-rss-per-1k-other-MiB")
		b.ReportMetric((own[i]-other[i])*1000/float64(n), short+"-rss-per-1k-own-MiB")
		b.ReportMetric(after[i], short+"-rss-after-restart-MiB")
		for _, verb := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if v := requests(created[i], verb); v > 0 {
				b.ReportMetric(v/float64(n), short+"-create-"+verb+"/release")
			}
			if v := requests(restarted[i], verb); v > 0 {
				b.ReportMetric(v/float64(n), short+"-restart-"+verb+"/release")
			}
		}
	}
	for _, p := range procs {
		if err := p.proc.FailIfExited(); err != nil {
			b.Fatal(err)
		}
	}
}

// startShardProc runs bin/<name> as shard1 and waits until it is ready.
func startShardProc(b *testing.B, env *controlplane.Environment, name string, extra ...string) *shardProc {
	binary := filepath.Join(controlplane.RepoRoot(), "bin", name)
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("%s missing (run make build): %v", binary, err)
	}
	health, metrics := testenv.FreeAddr(b), testenv.FreeAddr(b)
	args := append([]string{"--metrics-addr=" + metrics, "--health-addr=" + health,
		"--watch-label-selector=" + shard.Key + "=shard1"}, extra...)
	p, err := env.StartProcess(name, binary, []string{"GOMAXPROCS=2"}, args...)
	if err != nil {
		b.Fatal(err)
	}
	waitReady(b, "http://"+health+"/readyz")
	return &shardProc{name: name, proc: p, metrics: "http://" + metrics + "/metrics"}
}

// createRelease creates a release of the given shard: its HelmRelease, a
// labelled CA source Secret and a CredentialAccount.
func createRelease(ctx context.Context, c client.Client, ns, release, shardName string) error {
	l := map[string]string{shard.Key: shardName}
	if err := c.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns, Labels: l},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "app",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}}},
	}); err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-ca", Namespace: ns, Labels: map[string]string{
			"internal.cozystack.io/publish-ca-cert": "true", "internal.cozystack.io/publish-ca-cert-release": release}},
		Data: map[string][]byte{"ca.crt": testCert},
	}); err != nil {
		return err
	}
	return c.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-app", Namespace: ns, Labels: l},
		Spec:       credv1.CredentialAccountSpec{Release: release, Username: "app", Format: credv1.Format{Name: "sha256-hex"}},
	})
}

func waitLabelled(b *testing.B, c client.Client, ns, label string, n int) {
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := c.List(ctx, &list, client.InNamespace(ns), client.HasLabels{label}); err != nil {
			return false, err
		}
		return len(list.Items) >= n, nil
	})
	must(b, err)
}

// scrape reads a Prometheus text endpoint into series → value.
func scrape(b *testing.B, url string) map[string]float64 {
	resp, err := http.Get(url) //nolint:gosec // loopback metrics of our own process
	must(b, err)
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	must(b, sc.Err())
	return out
}

func diff(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// requests sums rest_client_requests_total of one verb; client-go counts
// lists and watches as GET.
func requests(m map[string]float64, verb string) float64 {
	return sum(m, "rest_client_requests_total{", `method="`+verb+`"`)
}

// sum adds the series of a metric (its name and "{") whose labels hold label.
func sum(m map[string]float64, metric, label string) float64 {
	var total float64
	for k, v := range m {
		if strings.HasPrefix(k, metric) && strings.Contains(k, label) {
			total += v
		}
	}
	return total
}
