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

package accessapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// benchClients is the number of parallel clients minting.
const benchClients = 8

// BenchmarkMint measures mints through kube-apiserver and the aggregation
// layer: 8 clients, each minting its own account (a shared account would
// mostly measure 409s), reporting latency percentiles and throughput.
func BenchmarkMint(b *testing.B) {
	for _, format := range []string{verifier.SHA256Hex, verifier.SCRAMSHA256} {
		b.Run(format, func(b *testing.B) { benchmarkMint(b, format) })
	}
}

func benchmarkMint(b *testing.B, format string) {
	ctx := context.Background()
	ns := newNamespace(b)
	c, _ := newMinter(b, ns)
	accounts := make([]string, benchClients)
	for i := range accounts {
		accounts[i] = "db" + string(rune('a'+i))
		newAccount(b, ns, accounts[i], "app", format, credv1.OwnerTenant)
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
	)
	next := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, acct := range accounts {
		wg.Go(func() {
			var mine []time.Duration
			var failed int
			for range next {
				t0 := time.Now()
				_, err := mint(ctx, c, ns, acct, "")
				mine = append(mine, time.Since(t0))
				if err != nil {
					failed++
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failures += failed
			mu.Unlock()
		})
	}
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failures > 0 {
		b.Fatalf("%d of %d mints failed", failures, b.N)
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "mints/s")
}
