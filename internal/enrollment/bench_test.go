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

package enrollment_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	controllers "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/latency"
)

// benchClients is the number of agents enrolling or renewing at once.
const benchClients = 8

// benchServer serves a Server signing with the embedded CA (its Secret in
// a namespace of its own) and returns its URL and the CA's bundle.
func benchServer(b *testing.B) (string, *x509.CertPool) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	ns := "bench-ca-" + time.Now().Format("150405.000000")[7:]
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	opts := embedded.NewOptions()
	opts.Namespace = ns
	authority, err := embedded.New(opts, k8s, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := authority.Reconcile(ctx); err != nil {
		b.Fatal(err)
	}
	bundle, err := authority.Bundle(ctx)
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srvOpts := enrollment.NewOptions()
	srvOpts.FailedAttemptsBurst = 0
	// Every client may have a registration pending at once: the benchmark
	// measures the server, not the pending limit.
	srvOpts.Limits.MaxPendingPerToken = 4 * benchClients
	srvOpts.Log = ctrl.Log.WithName("bench")
	srv, err := controllers.NewServer(env.Setup, authority, srvOpts)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		_ = srv.ServeListener(ctx, tls.NewListener(ln, enrollment.TLSConfig(authority.GetCertificate([]string{"127.0.0.1"}))))
	}()
	return "https://" + ln.Addr().String(), roots
}

// run drives b.N operations over benchClients agents and reports latency
// percentiles, throughput, and what each operation cost kube-apiserver,
// etcd and this process (the server and the reconcilers beside it).
func run(b *testing.B, op string, do func(client int) error) {
	b.Helper()
	b.ResetTimer()
	meter := benchcost.Start(b, env.Config)
	res := enrolldriver.Run(benchClients, b.N, do)
	b.StopTimer()
	cost := meter.Stop(b, b.N)
	if res.Failed() > 0 {
		b.Fatalf("%d of %d %ss refused:\n%s", res.Failed(), b.N, op, res)
	}
	latency.Report(b, res.Latencies, res.Elapsed, op+"s/s")
	cost.Report(b, op)
}

func benchAgents(b *testing.B, roots *x509.CertPool) []*enrolldriver.Agent {
	agents := make([]*enrolldriver.Agent, benchClients)
	for i := range agents {
		a, err := enrolldriver.NewAgent(roots)
		if err != nil {
			b.Fatal(err)
		}
		agents[i] = a
	}
	return agents
}

// BenchmarkEnrollment measures whole enrollments (both steps: token check,
// Workload registration, signing, the serial recorded, the token's use
// counted) through the HTTPS listener against the real API server.
func BenchmarkEnrollment(b *testing.B) {
	base, roots := benchServer(b)
	ns := env.NewNamespace(b)
	p := newPolicy(b, ns, policySpec(24*time.Hour, time.Hour))
	token, _ := newToken(b, p, time.Hour)
	agents := benchAgents(b, roots)
	run(b, "enrollment", func(i int) error { return agents[i].Enroll(base, token) })
}

// BenchmarkRenewal measures renewals of enrolled workloads, each by its
// current certificate on a new connection.
func BenchmarkRenewal(b *testing.B) {
	base, roots := benchServer(b)
	ns := env.NewNamespace(b)
	p := newPolicy(b, ns, policySpec(24*time.Hour, time.Hour))
	token, _ := newToken(b, p, time.Hour)
	agents := benchAgents(b, roots)
	for _, a := range agents {
		if err := a.Enroll(base, token); err != nil {
			b.Fatal(err)
		}
	}
	run(b, "renewal", func(i int) error { return agents[i].Renew(base) })
}
