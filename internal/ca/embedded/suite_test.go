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
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fluxevents "github.com/fluxcd/pkg/runtime/events"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testlog"
)

var (
	env *controlplane.Environment
	// logs holds every log line of the CAs under test.
	logs testlog.Buffer
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var sink io.Writer = &logs
	if os.Getenv("CREDO_TEST_LOG") != "" {
		sink = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(sink), zap.UseDevMode(true), zap.Level(zapcore.Level(-5))))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	env, err = controlplane.Start(ctx, controlplane.Options{NoControllerManager: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer env.Stop()
	code := m.Run()
	// No key material in any log line of any test.
	if out := logs.String(); strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "MIGHAgEA") {
		fmt.Fprintln(os.Stderr, "FAIL: the CA logged key material")
		return 1
	}
	return code
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

// newNamespace creates a namespace of its own for a test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := "ca-" + rand.String(8)
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns
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
