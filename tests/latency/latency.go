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

// Package latency reports the latencies of a closed-loop benchmark.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Report sorts latencies and reports their p50 and p99 in milliseconds and
// the throughput, len(latencies) operations over elapsed, in unit.
func Report(b *testing.B, latencies []time.Duration, elapsed time.Duration, unit string) {
	b.Helper()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), unit)
}

// MedianMs returns the median of latencies in milliseconds, 0 for none.
func MedianMs(latencies []time.Duration) float64 {
	if len(latencies) == 0 {
		return 0
	}
	s := slices.Clone(latencies)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
