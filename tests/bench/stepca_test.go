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
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/latency"
)

// BenchmarkStepCA runs step-ca, the certificate authority credo's
// enrollment is measured against, as BenchmarkEnrollmentController runs
// credo's enrollment-controller: its own process (CREDO_BENCH_STEPCA, which
// make bench-stepca builds with hack/build-stepca.sh), with one JWK
// provisioner and a badger database, and eight clients at once on
// loopback. "sign" is the counterpart of an enrollment: each operation
// makes a fresh key and a CSR with one URI SAN, mints a one-time token with
// the provisioner's key and posts both to /1.0/sign. "renew" renews each
// client's current certificate with itself (mTLS, /1.0/renew). As credo's
// agents (tests/enrolldriver), each client signs on one kept-alive
// connection and renews on a new TLS connection each time. It reports throughput, p50/p99 and
// the CPU per operation of step-ca and of this process (the clients), and
// fails on any refusal.
func BenchmarkStepCA(b *testing.B) {
	binary := os.Getenv("CREDO_BENCH_STEPCA")
	if binary == "" {
		b.Skip("CREDO_BENCH_STEPCA names no step-ca binary: run make bench-stepca, which builds one")
	}
	if _, err := os.Stat(binary); err != nil {
		b.Fatalf("CREDO_BENCH_STEPCA: %v (hack/build-stepca.sh builds step-ca)", err)
	}
	ca := startStepCA(b, binary)
	agents := make([]*stepAgent, enrollAgents)
	for i := range agents {
		var err error
		agents[i], err = newStepAgent(ca)
		must(b, err)
	}
	var signed atomic.Int64
	nextURI := func() *url.URL {
		return &url.URL{Scheme: "spiffe", Host: "bench", Path: "/agent/" + strconv.FormatInt(signed.Add(1), 10)}
	}
	measure := func(b *testing.B, op string, do func(i int) error) {
		var (
			once  sync.Once
			first error
		)
		b.ResetTimer()
		meter := benchcost.StartProcesses(map[string]int{"step-ca": ca.proc.PID()})
		res := enrolldriver.Run(enrollAgents, b.N, func(i int) error {
			err := do(i)
			if err != nil {
				once.Do(func() { first = err })
			}
			return err
		})
		b.StopTimer()
		cost := meter.Stop(b.N)
		must(b, ca.proc.FailIfExited())
		if res.Failed() > 0 {
			b.Fatalf("%d of %d %ss failed, the first with %v; by reason:\n%s", res.Failed(), b.N, op, first, res)
		}
		b.ReportMetric(0, "refusals")
		latency.Report(b, res.Latencies, res.Elapsed, op+"s/s")
		cost.ReportCPU(b, op)
	}
	b.Run("sign", func(b *testing.B) {
		measure(b, "sign", func(i int) error { return agents[i].sign(nextURI()) })
	})
	b.Run("renew", func(b *testing.B) {
		// Run alone (-bench BenchmarkStepCA/renew), the clients have no
		// certificate yet: each gets one first, unmeasured.
		for _, a := range agents {
			if a.cert == nil {
				must(b, a.sign(nextURI()))
			}
		}
		measure(b, "renewal", func(i int) error { return agents[i].renew() })
	})
}
