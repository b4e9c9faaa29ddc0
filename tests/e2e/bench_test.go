//go:build e2e

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

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// BenchmarkMintToRelease measures, b.N times, the time from a mint's
// response to the running release's users.xml carrying the new verifier:
// credo writes the account Secret, helm-controller (watching the Secret)
// upgrades the ClickHouse-style release, Helm renders the ConfigMap. It
// reports the median and the slowest in ms besides ns/op.
func BenchmarkMintToRelease(b *testing.B) {
	needLocal(b)
	ctx := context.Background()
	ns := newNamespace(b, "bench-mint-release-")
	installClickHouse(b, ns, "ch")
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: "ch-app"}}
		m.Namespace = ns
		if err := k8s.Create(ctx, m); err != nil {
			b.Fatalf("minting: %v", err)
		}
		want := "<password_sha256_hex>" + sha256Hex(m.Status.Password) + "</password_sha256_hex>"
		b.StartTimer()
		start := time.Now()
		for !strings.Contains(renderedUsers(ns, "ch"), want) {
			if time.Since(start) > 2*time.Minute {
				b.Fatal("the release did not get the minted password's verifier within 2 minutes")
			}
			time.Sleep(10 * time.Millisecond)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}
