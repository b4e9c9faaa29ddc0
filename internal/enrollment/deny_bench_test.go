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
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/latency"
)

// BenchmarkDeny measures how soon a deny takes effect on two replicas of
// the listener: one with the manager's cache (A), one whose cache never
// sees the deny (B). Each iteration denies an enrolled workload and, from
// the moment kube-apiserver acknowledged the patch, renews on A and on B;
// it fails if either renewal is not refused. It reports the medians of the
// time from the acknowledgement to each refusal (deny-to-refusal-A-ms;
// -B-ms, B asked after A) and of the time until A's cache shows the deny (cache-lag-ms),
// which the refusals do not wait for.
//
//	go test ./internal/enrollment/ -run '^$' -bench BenchmarkDeny -benchtime 50x
func BenchmarkDeny(b *testing.B) {
	replicaA := startServer(b)
	frozen := &frozenWorkloads{m: map[string]enrollv1.Workload{}}
	replicaB := startServer(b, withCluster(func(c enrollment.Cluster) enrollment.Cluster { return staleCluster{c, frozen} }))
	ns := env.NewNamespace(b)
	p := newPolicy(b, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(b, p, time.Hour)
	ctx := context.Background()
	var toA, toB, lag []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		w := enroll(b, replicaA, token, nil)
		frozen.freeze(getWorkload(b, ns, w.uuid))
		b.StartTimer()
		setDenied(b, ns, w.uuid, &enrollv1.WorkloadDenial{Reason: "benchmark"})
		acked := time.Now()
		for _, r := range []struct {
			base string
			out  *[]time.Duration
		}{{replicaA, &toA}, {replicaB, &toB}} {
			status, e, _ := renew(b, r.base, w, w.tlsCert())
			if e == nil || e.Reason != enrollapi.ReasonDenied {
				b.Fatalf("a renewal after the deny was acknowledged was not refused as denied: %d %v", status, e)
			}
			*r.out = append(*r.out, time.Since(acked))
		}
		b.StopTimer()
		for {
			var cached enrollv1.Workload
			if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.uuid}, &cached); err == nil && cached.Spec.Denied != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		lag = append(lag, time.Since(acked))
		b.StartTimer()
	}
	b.ReportMetric(latency.MedianMs(toA), "deny-to-refusal-A-ms")
	b.ReportMetric(latency.MedianMs(toB), "deny-to-refusal-B-ms")
	b.ReportMetric(latency.MedianMs(lag), "cache-lag-ms")
}
