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
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controllers "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

var (
	env *testenv.Env
	k8s client.Client
	// reader is the manager's cache, with the server's indexes.
	reader client.Reader
	// cluster is the manager the servers are built on, as
	// cmd/enrollment-controller builds its server.
	cluster enrollment.Cluster
	// clockOffset moves the servers' clock forward, to judge expiry and grace.
	clockOffset atomic.Int64
	testCA      *memoryCA
)

func serverNow() time.Time { return time.Now().Add(time.Duration(clockOffset.Load())) }

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		ControlPlane:   controlplane.Options{NoControllerManager: true},
		LogLevel:       zapcore.Level(-2),
		ControllerName: controllers.ControllerName,
		ConfigureCache: controllers.ConfigureCache,
	}, func(ctx context.Context, e *testenv.Env) error {
		env, k8s = e, e.Client
		mgr := e.Setup.Manager
		// The reconcilers run beside the servers, as in the binary.
		if err := controllers.Setup(ctx, e.Setup, controllers.Options{Concurrent: 2, Limits: enrollment.DefaultLimits()}); err != nil {
			return err
		}
		reader, cluster = mgr.GetCache(), mgr
		authority, err := testpki.NewCA("test enrollment CA", testpki.NotAfter(time.Now().Add(24*time.Hour)))
		if err != nil {
			return fmt.Errorf("test CA: %w", err)
		}
		testCA = &memoryCA{ca: authority}
		return nil
	}))
}

// memoryCA is the simplest CertificateAuthority: a key in memory. The
// server is tested against the interface, not against the embedded CA.
type memoryCA struct {
	ca     *testpki.Cert
	signed atomic.Int64
}

var _ ca.CertificateAuthority = &memoryCA{}

func (c *memoryCA) Sign(_ context.Context, req ca.SigningRequest) (*ca.Issued, error) {
	leaf, err := c.ca.NewLeaf(testpki.PublicKey(req.PublicKey), testpki.URIs(req.URI),
		testpki.Validity(req.NotBefore, req.NotAfter))
	if err != nil {
		return nil, err
	}
	c.signed.Add(1)
	return &ca.Issued{Certificate: leaf.Cert, CertificatePEM: leaf.CertPEM()}, nil
}

func (c *memoryCA) Bundle(context.Context) ([]byte, error) { return c.ca.CertPEM(), nil }

// servingCert issues the listener's certificate for 127.0.0.1.
func (c *memoryCA) servingCert() (tls.Certificate, error) {
	leaf, err := c.ca.NewLeaf(testpki.Serving())
	if err != nil {
		return tls.Certificate{}, err
	}
	return leaf.TLS(), nil
}

// serverSetup is what a test may change before its server is built.
type serverSetup struct {
	cluster  enrollment.Cluster
	opts     enrollment.Options
	ca       ca.CertificateAuthority
	recorder events.Recorder
}

// withFailureLimit limits failed token attempts: burst, then one per every.
func withFailureLimit(every time.Duration, burst int) func(*serverSetup) {
	return func(s *serverSetup) { s.opts.FailedAttemptsEvery, s.opts.FailedAttemptsBurst = every, burst }
}

func withRecorder(rec events.Recorder) func(*serverSetup) {
	return func(s *serverSetup) { s.recorder = rec }
}

func withLimits(mutate func(*enrollment.Limits)) func(*serverSetup) {
	return func(s *serverSetup) { mutate(&s.opts.Limits) }
}

// withCluster builds the server on what wrap makes of the suite's manager.
func withCluster(wrap func(enrollment.Cluster) enrollment.Cluster) func(*serverSetup) {
	return func(s *serverSetup) { s.cluster = wrap(s.cluster) }
}

func withUseFlush(every time.Duration) func(*serverSetup) {
	return func(s *serverSetup) { s.opts.TokenUseFlush = every }
}

func withCA(authority ca.CertificateAuthority) func(*serverSetup) {
	return func(s *serverSetup) { s.ca = authority }
}

// startServer builds a Server with enrollment.New on the suite's manager,
// as cmd/enrollment-controller does, with the flags' defaults except that
// failed attempts are not limited unless a test says so, serves it on
// 127.0.0.1 until the test ends and returns its URL.
func startServer(t testing.TB, mutate ...func(*serverSetup)) string {
	t.Helper()
	cert, err := testCA.servingCert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	setup := serverSetup{cluster: cluster, opts: enrollment.NewOptions(), ca: testCA}
	setup.opts.FailedAttemptsBurst = 0
	setup.opts.Now = serverNow
	setup.opts.TokenUseFlush = 20 * time.Millisecond
	setup.opts.Log = ctrl.Log.WithName("enrollment")
	for _, m := range mutate {
		m(&setup)
	}
	srv, err := enrollment.New(setup.cluster, setup.ca, setup.recorder, setup.opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeListener(ctx, tls.NewListener(ln, enrollment.TLSConfig(
			func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil })))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return "https://" + ln.Addr().String()
}
