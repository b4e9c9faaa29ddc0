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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/latency"
	"github.com/credo-dev/credo/tests/testenv"
)

// enrollAgents is the number of agents enrolling or renewing at once, all
// with one join token.
const enrollAgents = 8

// BenchmarkEnrollmentController runs the shipped enrollment-controller
// binary (bin/, built by make build) with its embedded CA and defaults, and
// eight agents enrolling at once with one join token ("enroll": both steps)
// and then renewing ("renew": each with its current certificate, on a new
// connection). It reports throughput, p50/p99 and the cost per operation in
// kube-apiserver requests and in CPU of kube-apiserver, etcd and the
// controller, and fails on any refusal. CREDO_BENCH_ENROLLMENT_CONTROLLER
// names another binary, to compare builds; CREDO_BENCH_WORKLOADS enrolls a
// fleet first (benchWorkloads).
func BenchmarkEnrollmentController(b *testing.B) {
	f := startEnrollmentFleet(b)
	env, proc, agents, base, tok := f.env, f.proc, f.agents, f.base, f.token
	metrics := f.metrics
	measure := func(b *testing.B, op string, do func(i int) error) {
		b.ResetTimer()
		meter := benchcost.Start(b, env.Config)
		meter.Process("controller", proc.PID())
		profiled := profileProcess(b, metrics, op)
		res := enrolldriver.Run(enrollAgents, b.N, do)
		b.StopTimer()
		cost := meter.Stop(b, b.N)
		profiled()
		must(b, proc.FailIfExited())
		if res.Failed() > 0 {
			b.Fatalf("%d of %d %ss refused, by reason:\n%s", res.Failed(), b.N, op, res)
		}
		b.ReportMetric(0, "refusals")
		b.ReportMetric(float64(benchWorkloads(b)), "workloads-before")
		latency.Report(b, res.Latencies, res.Elapsed, op+"s/s")
		cost.Report(b, op)
	}
	b.Run("enroll", func(b *testing.B) {
		measure(b, "enrollment", func(i int) error { return agents[i].Enroll(base, tok) })
	})
	b.Run("renew", func(b *testing.B) {
		measure(b, "renewal", func(i int) error { return agents[i].Renew(base) })
	})
}

// enrollmentFleet is the shipped enrollment-controller on a fresh control
// plane, with a policy, a join token and eight agents not enrolled yet
// (or, with CREDO_BENCH_WORKLOADS, after a fleet enrolled).
type enrollmentFleet struct {
	env                  *controlplane.Environment
	proc                 *controlplane.Process
	agents               []*enrolldriver.Agent
	base, metrics, token string
	namespace            string
}

// startEnrollmentFleet starts the enrollment-controller binary (bin/, or
// CREDO_BENCH_ENROLLMENT_CONTROLLER) with its embedded CA and defaults.
func startEnrollmentFleet(b *testing.B) *enrollmentFleet {
	b.Helper()
	binary := filepath.Join(controlplane.RepoRoot(), "bin", "enrollment-controller")
	if v := os.Getenv("CREDO_BENCH_ENROLLMENT_CONTROLLER"); v != "" {
		binary = v
	}
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("%s missing (run make build): %v", binary, err)
	}
	ctx := context.Background()
	env := testenv.ControlPlane(b, controlplane.Options{NoControllerManager: true})
	const system = "credo-system"
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: system}}))
	listen, health, metrics := testenv.FreeAddr(b), testenv.FreeAddr(b), testenv.FreeAddr(b)
	proc, err := env.StartProcess("enrollment-controller", binary, []string{"GOMAXPROCS=2"},
		"--metrics-addr="+metrics, "--health-addr="+health, "--namespace="+system,
		"--enrollment-addr="+listen, "--enrollment-hosts=127.0.0.1")
	must(b, err)
	waitReady(b, "http://"+health+"/readyz")
	base := "https://" + listen
	roots := enrollmentBundle(b, base)

	ns := "fleet"
	must(b, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(b, env.Client.Create(ctx, &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "vms", Namespace: ns}}))
	tok, err := jointoken.New()
	must(b, err)
	must(b, env.Client.Create(ctx, &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: "vms", SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))},
	}))
	agents := make([]*enrolldriver.Agent, enrollAgents)
	for i := range agents {
		agents[i], err = enrolldriver.NewAgent(roots)
		must(b, err)
	}
	if n := benchWorkloads(b); n > 0 {
		// The fleet already enrolled: n Workloads of the same policy and
		// token, each with its certificate recorded.
		res := enrolldriver.Run(enrollAgents, n, func(i int) error { return agents[i].Enroll(base, tok.String()) })
		if res.Failed() > 0 {
			b.Fatalf("enrolling the fleet of %d: %d refused:\n%s", n, res.Failed(), res)
		}
	}
	return &enrollmentFleet{env: env, proc: proc, agents: agents, base: base, metrics: metrics, token: tok.String(), namespace: ns}
}

// profileProcess saves, when CREDO_BENCH_CONTROLLER_PROFILE names a
// directory, the CPU profile of the next few seconds of the process
// serving pprof at addr as <dir>/<op>.pprof (CREDO_BENCH_APISERVER_PROFILE
// does it for kube-apiserver). The returned func waits for it.
func profileProcess(b *testing.B, addr, op string) func() {
	dir := os.Getenv("CREDO_BENCH_CONTROLLER_PROFILE")
	if dir == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=" + benchcost.ProfileSeconds("4")) //nolint:gosec // loopback
		if err != nil {
			b.Logf("profiling the controller: %v", err)
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s", resp.Status)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, op+".pprof"), raw, 0o600)
		}
		if err != nil {
			b.Logf("saving the controller's profile: %v", err)
		}
	}()
	return func() { <-done }
}

// benchWorkloads is CREDO_BENCH_WORKLOADS: how many Workloads are enrolled
// before the measured enrollments and renewals (default 0), to show how
// their cost grows with the fleet.
func benchWorkloads(b *testing.B) int {
	v := os.Getenv("CREDO_BENCH_WORKLOADS")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("CREDO_BENCH_WORKLOADS=%q: not a count", v)
	}
	return n
}

// enrollmentBundle waits until the listener at base answers and returns
// the trust bundle it serves. That first request trusts whatever serves
// base: a benchmark's loopback listener, which every later request then
// verifies with the bundle.
func enrollmentBundle(b *testing.B, base string) *x509.CertPool {
	b.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // bootstrap on loopback
	roots := x509.NewCertPool()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := c.Get(base + enrollapi.PathBundle)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		pemData, err := io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK && roots.AppendCertsFromPEM(pemData), nil
	})
	must(b, err)
	return roots
}
