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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testlog"
)

var (
	env *controlplane.Environment
	k8s client.Client
	// reader is the manager's cache, with the server's indexes.
	reader client.Reader
	// cluster is the manager the servers are built on, as
	// cmd/enrollment-controller builds its server.
	cluster enrollment.Cluster
	// clockOffset moves the servers' clock forward, to judge expiry and grace.
	clockOffset atomic.Int64
	testCA      *memoryCA
	logs        testlog.Buffer
)

func serverNow() time.Time { return time.Now().Add(time.Duration(clockOffset.Load())) }

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(&logs), zap.UseDevMode(true), zap.Level(zapcore.Level(-2))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	env, err = controlplane.Start(ctx, controlplane.Options{NoControllerManager: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer env.Stop()
	k8s = env.Client
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		return 1
	}
	if err := enrollment.IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		return 1
	}
	reader = mgr.GetCache()
	cluster = mgr
	if testCA, err = newMemoryCA(); err != nil {
		fmt.Fprintf(os.Stderr, "test CA: %v\n", err)
		return 1
	}
	return m.Run()
}

// memoryCA is the simplest CertificateAuthority: a key in memory. The
// server is tested against the interface, not against the embedded CA.
type memoryCA struct {
	key    *ecdsa.PrivateKey
	cert   *x509.Certificate
	pem    []byte
	signed atomic.Int64
}

var _ ca.CertificateAuthority = &memoryCA{}

func newMemoryCA() (*memoryCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test enrollment CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	return &memoryCA{key: key, cert: cert, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func (c *memoryCA) Sign(_ context.Context, req ca.SigningRequest) (*ca.Issued, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)), URIs: []*url.URL{req.URI},
		NotBefore: req.NotBefore, NotAfter: req.NotAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, req.PublicKey, c.key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	c.signed.Add(1)
	return &ca.Issued{Certificate: cert, CertificatePEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func (c *memoryCA) Bundle(context.Context) ([]byte, error) { return c.pem, nil }

// servingCert issues the listener's certificate for 127.0.0.1.
func (c *memoryCA) servingCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// serverSetup is what a test may change before its server is built.
type serverSetup struct {
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

func withCA(authority ca.CertificateAuthority) func(*serverSetup) {
	return func(s *serverSetup) { s.ca = authority }
}

// startServer builds a Server with enrollment.New on the suite's manager,
// as cmd/enrollment-controller does, with the flags' defaults except that
// failed attempts are not limited unless a test says so, serves it on
// 127.0.0.1 until the test ends and returns its URL.
func startServer(t *testing.T, mutate ...func(*serverSetup)) string {
	t.Helper()
	cert, err := testCA.servingCert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	setup := serverSetup{opts: enrollment.NewOptions(), ca: testCA}
	setup.opts.FailedAttemptsBurst = 0
	setup.opts.Now = serverNow
	setup.opts.Log = ctrl.Log.WithName("enrollment")
	for _, m := range mutate {
		m(&setup)
	}
	srv, err := enrollment.New(cluster, setup.ca, setup.recorder, setup.opts)
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
