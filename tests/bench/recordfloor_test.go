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
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/latency"
)

// BenchmarkWorkloadRecord measures the floor under credo's enrollments and
// renewals: the writes of their record alone, with nothing else (no TLS, no
// signature, no check, no read). The shipped enrollment-controller runs
// beside it, as in BenchmarkEnrollmentController, so that every write also
// reaches the informer watching Workloads, and each of the eight agents
// enrolls once through it first: its Workload is the record as the
// controller writes it, certificate and all. Then eight writers at once:
//
//   - "renewal": the conditional status update a renewal makes (a new
//     serial, the previous one, the renewal's time and count);
//   - "renewal-lightest": the same with the least a renewal could record
//     (no certificate kept for a retry's answer), to show what a lighter
//     record would gain;
//   - "enrollment": the Workload's creation (step 1) and the status update
//     that records its first certificate (step 2).
//
// No design that keeps one Workload per workload as the registry and
// writes it before answering gets above these rates: kube-apiserver offers
// no write of several objects at once.
func BenchmarkWorkloadRecord(b *testing.B) {
	f := startEnrollmentFleet(b)
	res := enrolldriver.Run(enrollAgents, enrollAgents, func(i int) error { return f.agents[i].Enroll(f.base, f.token) })
	if res.Failed() > 0 {
		b.Fatalf("enrolling the agents: %d refused:\n%s", res.Failed(), res)
	}
	ctx := context.Background()
	cfg := rest.CopyConfig(f.env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{Scheme: f.env.Scheme})
	must(b, err)
	// The Workload reconciler answers each enrollment with its own status
	// write: let it settle before reading the records.
	time.Sleep(2 * time.Second)
	records := make([]*enrollv1.Workload, enrollAgents)
	for i, a := range f.agents {
		records[i] = &enrollv1.Workload{}
		must(b, c.Get(ctx, client.ObjectKey{Namespace: f.namespace, Name: a.UUID}, records[i]))
		if records[i].Status.Certificate == "" {
			b.Fatalf("workload %s records no certificate", a.UUID)
		}
	}
	measure := func(b *testing.B, op string, do func(i int) error) {
		b.ResetTimer()
		meter := benchcost.Start(b, f.env.Config)
		meter.Process("controller", f.proc.PID())
		res := enrolldriver.Run(enrollAgents, b.N, do)
		b.StopTimer()
		cost := meter.Stop(b, b.N)
		must(b, f.proc.FailIfExited())
		if res.Failed() > 0 {
			b.Fatalf("%d of %d %s writes failed:\n%s", res.Failed(), b.N, op, res)
		}
		latency.Report(b, res.Latencies, res.Elapsed, op+"s/s")
		cost.Report(b, op)
	}
	b.Run("renewal", func(b *testing.B) {
		measure(b, "renewal", func(i int) error {
			next := renewed(records[i].DeepCopy())
			if err := c.Status().Update(ctx, next); err != nil {
				return err
			}
			records[i] = next
			return nil
		})
	})
	b.Run("renewal-lightest", func(b *testing.B) {
		// The least a renewal could record and still let only the latest
		// certificate renew: the serials and times, not the certificate
		// that answers a retry, nor who asked.
		// Written once before the measure (each part runs twice: once for
		// one operation, then for b.N), and read back once the Workload
		// reconciler answered the change.
		light := make([]*enrollv1.Workload, len(records))
		for i := range records {
			light[i] = &enrollv1.Workload{}
			must(b, c.Get(ctx, client.ObjectKeyFromObject(records[i]), light[i]))
			light[i].Status.Certificate, light[i].Status.RequestSHA256, light[i].Status.IssuedTo = "", "", nil
			must(b, c.Status().Update(ctx, light[i]))
		}
		time.Sleep(2 * time.Second)
		for _, wl := range light {
			must(b, c.Get(ctx, client.ObjectKeyFromObject(wl), wl))
		}
		measure(b, "renewal", func(i int) error {
			next := renewed(light[i].DeepCopy())
			if err := c.Status().Update(ctx, next); err != nil {
				return err
			}
			light[i] = next
			return nil
		})
	})
	b.Run("enrollment", func(b *testing.B) {
		measure(b, "enrollment", func(i int) error {
			wl := &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{
				Name: uuid.NewString(), Namespace: f.namespace, Labels: records[i].Labels,
			}, Spec: records[i].Spec}
			if err := c.Create(ctx, wl); err != nil {
				return err
			}
			wl.Status = *records[i].Status.DeepCopy()
			wl.Status.Serial, wl.Status.PreviousSerial, wl.Status.Renewals, wl.Status.LastRenewal = randomSerial(), "", 0, nil
			return c.Status().Update(ctx, wl)
		})
	})
}

// renewed is wl's status as a renewal records it: a new serial, the
// previous one, the renewal's time and count. The certificate recorded
// keeps its size.
func renewed(wl *enrollv1.Workload) *enrollv1.Workload {
	now := metav1.Now()
	st := &wl.Status
	st.PreviousSerial, st.Serial = st.Serial, randomSerial()
	st.LastRenewal, st.Renewals = &now, st.Renewals+1
	if st.IssuedTo != nil {
		st.IssuedTo.At = &now
	}
	return wl
}

// randomSerial is a serial as the embedded CA makes one: 128 random bits,
// in hex.
func randomSerial() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
