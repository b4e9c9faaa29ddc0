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
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxevents "github.com/fluxcd/pkg/runtime/events"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// setDenied writes spec.denied as `kubectl credo workload deny` does (a
// merge patch); a nil denial lifts it.
func setDenied(t testing.TB, ns, id string, d *enrollv1.WorkloadDenial) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"denied": d}})
	if err != nil {
		t.Fatal(err)
	}
	wl := &enrollv1.Workload{}
	wl.Name, wl.Namespace = id, ns
	if err := k8s.Patch(context.Background(), wl, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// A deny takes effect at the next renewal on every replica of the listener
// as soon as kube-apiserver acknowledged it, whatever each replica's cache
// holds: a renewal's write is conditional on the version it read, and a
// refusal is confirmed on the API server. Replica B's cache never sees the
// deny at all. The refusal has its own reason, holds within the grace too,
// and is an event; lifting the deny restores renewal.
func TestADenyStopsRenewalsOnEveryReplicaAtOnceUntilLifted(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	rec := fluxevents.NewFakeRecorder(64, true)
	replicaA := startServer(t, withRecorder(rec))
	frozen := &frozenWorkloads{m: map[string]enrollv1.Workload{}}
	replicaB := startServer(t, withCluster(func(c enrollment.Cluster) enrollment.Cluster { return staleCluster{c, frozen} }))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, replicaA, token, nil)
	frozen.freeze(getWorkload(t, ns, w.uuid))
	serial := getWorkload(t, ns, w.uuid).Status.Serial

	setDenied(t, ns, w.uuid, &enrollv1.WorkloadDenial{Reason: "laptop reported stolen", By: "alice"})
	for name, base := range map[string]string{"replica A": replicaA, "replica B (its cache never sees the deny)": replicaB} {
		status, e, _ := renew(t, base, w, w.tlsCert())
		expectRefused(t, "renewal of a denied workload on "+name, status, e, 403, enrollapi.ReasonDenied)
		if !strings.Contains(e.Message, "laptop reported stolen") || strings.Contains(e.Message, "alice") || !e.IsDenied() || e.NeedsReenrollment() {
			t.Fatalf("%s: the refusal %q does not give the denial's reason, names who denied it, or asks for a new token", name, e.Message)
		}
	}
	// Expired, within its grace: still refused.
	clockOffset.Store(int64(61 * time.Minute))
	status, e, _ := renew(t, replicaA, w, w.tlsCert())
	expectRefused(t, "renewal of a denied workload within its grace", status, e, 403, enrollapi.ReasonDenied)
	clockOffset.Store(0)
	if got := getWorkload(t, ns, w.uuid).Status.Serial; got != serial {
		t.Fatal("a denied workload's renewal was recorded")
	}
	var refused bool
	for _, ev := range drain(rec) {
		refused = refused || (ev.Reason == enrollv1.RenewalDeniedReason && ev.Type == "Warning" &&
			strings.Contains(ev.Message, enrollapi.ReasonDenied))
	}
	if !refused {
		t.Fatal("no RenewalDenied Warning event")
	}

	// The Workload reconciler records when it saw the deny, and says so in
	// Ready; with no credo-workload-denials here, spec.denied.by is quoted
	// as unestablished, never recorded as who denied it.
	var denied *enrollv1.Workload
	waitFor(t, func() bool {
		denied = getWorkload(t, ns, w.uuid)
		return conditions.GetReason(denied, meta.ReadyCondition) == enrollv1.DeniedReason && denied.Status.DeniedAt != nil
	})
	if msg := conditions.GetMessage(denied, meta.ReadyCondition); !strings.Contains(msg, `spec.denied.by says "alice", which is not established`) ||
		!strings.Contains(msg, "laptop reported stolen") || denied.Status.DeniedBy != "" {
		t.Fatalf("Ready's message %q (status.deniedBy %q) does not say why it is denied and that spec.denied.by is not established", msg, denied.Status.DeniedBy)
	}

	setDenied(t, ns, w.uuid, nil)
	status, e, resp := renew(t, replicaA, w, w.tlsCert())
	if e != nil {
		t.Fatalf("renewal after the deny was lifted: %d %s", status, e)
	}
	w.cert = parseCert(t, resp.Certificate)
	if status, e, _ := renew(t, replicaB, w, w.tlsCert()); e != nil {
		t.Fatalf("renewal after the deny was lifted, on the replica whose cache lags: %d %s", status, e)
	}
	waitFor(t, func() bool {
		wl := getWorkload(t, ns, w.uuid)
		return conditions.IsReady(wl) && wl.Status.DeniedAt == nil
	})
}

// A registration denied between the two steps of its enrollment gets no
// certificate.
func TestADeniedRegistrationGetsNoCertificate(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	c := httpClient(nil)
	step1 := register(t, base, token)
	setDenied(t, ns, step1.UUID, &enrollv1.WorkloadDenial{Reason: "not expected"})
	status, e := post(t, c, base+enrollapi.PathCertificate(step1.UUID), enrollapi.CertificateRequest{Token: token, CSR: workloadCSR(t, testpki.Key(t), step1.UUID)}, nil)
	expectRefused(t, "step 2 of a denied registration", status, e, 403, enrollapi.ReasonDenied)
}

// racingCluster is the suite's manager whose client, before each of the
// next status writes of a Workload, lets another writer change it first.
type racingCluster struct {
	enrollment.Cluster
	before func(ctx context.Context, wl *enrollv1.Workload)
}

func (c racingCluster) GetClient() client.Client {
	return interceptor.NewClient(noWatch{c.Cluster.GetClient()}, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if wl, ok := obj.(*enrollv1.Workload); ok && sub == "status" {
				c.before(ctx, wl)
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
}

// noWatch is a client for interceptor.NewClient, which wants a WithWatch;
// the server never watches through its client.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("the enrollment server does not watch through its client")
}

// A renewal whose record is written over twice (here: a label change,
// then the deny itself between the server's read and its second write)
// hands out no certificate: nothing was recorded, so the answer is a 503
// the agent retries, and the retry is refused as denied.
func TestARenewalWhoseRecordLosesTwiceHandsOutNothing(t *testing.T) {
	ns := env.NewNamespace(t)
	var racing atomic.Int32
	var id string
	base := startServer(t, withCluster(func(c enrollment.Cluster) enrollment.Cluster {
		return racingCluster{c, func(ctx context.Context, wl *enrollv1.Workload) {
			if wl.Name != id || racing.Add(-1) < 0 {
				return
			}
			patch := `{"metadata":{"annotations":{"test/race":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`
			if racing.Load() == 0 {
				patch = `{"spec":{"denied":{"reason":"raced"}}}`
			}
			other := &enrollv1.Workload{}
			other.Name, other.Namespace = wl.Name, wl.Namespace
			if err := k8s.Patch(ctx, other, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				t.Error(err)
			}
		}}
	}))
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	serial := getWorkload(t, ns, w.uuid).Status.Serial
	id = w.uuid
	racing.Store(2)
	status, e, _ := renew(t, base, w, w.tlsCert())
	expectRefused(t, "a renewal whose record lost twice", status, e, 503, enrollapi.ReasonSigningUnavailable)
	if got := getWorkload(t, ns, w.uuid).Status.Serial; got != serial {
		t.Fatal("the registry changed")
	}
	status, e, _ = renew(t, base, w, w.tlsCert())
	expectRefused(t, "its retry, after the deny", status, e, 403, enrollapi.ReasonDenied)
}
