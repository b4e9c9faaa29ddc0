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

package embedded

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fluxevents "github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// env is the control plane the CAs under test keep their Secrets on; its
// Logs hold every log line of the CAs.
var env *testenv.Env

func TestMain(m *testing.M) {
	code := testenv.Main(m, testenv.Options{ControlPlane: controlplane.Options{NoControllerManager: true}, NoManager: true},
		func(_ context.Context, e *testenv.Env) error { env = e; return nil })
	// No key material in any log line of any test.
	if env != nil {
		if out := env.Logs.String(); strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "MIGHAgEA") {
			fmt.Fprintln(os.Stderr, "FAIL: the CA logged key material")
			code = 1
		}
	}
	os.Exit(code)
}

// countingReader counts the reads of the CA Secret, and fails them on demand.
type countingReader struct {
	client.Reader
	reads atomic.Int64
	fail  atomic.Bool
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.reads.Add(1)
	if r.fail.Load() {
		return fmt.Errorf("the API server is unreachable (test)")
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// testClock shifts the CA's clock.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// instance is one replica's CA, with what the test observes of it.
type instance struct {
	*CA
	reader *countingReader
	clock  *testClock
}

// newInstance returns a CA for the Secret in ns, as a replica would build it:
// its own uncached client.
func newInstance(t *testing.T, ns string, recorder *fluxevents.FakeRecorder, mutate func(*Options)) *instance {
	t.Helper()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	opts := NewOptions()
	opts.Namespace = ns
	if mutate != nil {
		mutate(&opts)
	}
	reader := &countingReader{Reader: c}
	var rec events.EventRecorder
	if recorder != nil {
		rec = recorder
	}
	authority, err := New(opts, c, reader, rec)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{}
	authority.now = clock.now
	return &instance{CA: authority, reader: reader, clock: clock}
}

func getSecret(t *testing.T, ns string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: DefaultSecretName}, &s); err != nil {
		t.Fatalf("reading the CA Secret: %v", err)
	}
	return &s
}
