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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	controllers "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/latency"
	"github.com/credo-dev/credo/tests/testpki"
)

// benchClients is the number of agents enrolling or renewing at once.
const benchClients = 8

// benchServer serves a Server signing with the embedded CA (its Secret in
// a namespace of its own) and returns its URL and an HTTP client factory
// trusting it.
func benchServer(b *testing.B) string {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	ns := "bench-ca-" + time.Now().Format("150405.000000")[7:]
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	opts := embedded.NewOptions()
	opts.Namespace = ns
	authority, err := embedded.New(opts, k8s, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := authority.Reconcile(ctx); err != nil {
		b.Fatal(err)
	}
	bundle, err := authority.Bundle(ctx)
	if err != nil {
		b.Fatal(err)
	}
	benchBundle = bundle
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srvOpts := enrollment.NewOptions()
	srvOpts.FailedAttemptsBurst = 0
	// Every client may have a registration pending at once: the benchmark
	// measures the server, not the pending limit.
	srvOpts.Limits.MaxPendingPerToken = 4 * benchClients
	srvOpts.Log = ctrl.Log.WithName("bench")
	srv, err := controllers.NewServer(env.Setup, authority, srvOpts)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		_ = srv.ServeListener(ctx, tls.NewListener(ln, enrollment.TLSConfig(authority.GetCertificate([]string{"127.0.0.1"}))))
	}()
	return "https://" + ln.Addr().String()
}

var benchBundle []byte

// run drives b.N operations over benchClients goroutines and reports
// latency percentiles and throughput.
func run(b *testing.B, unit string, op func(client int) error) {
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
		wg        sync.WaitGroup
	)
	next := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	for i := range benchClients {
		wg.Go(func() {
			var mine []time.Duration
			var failed int
			for range next {
				t0 := time.Now()
				if err := op(i); err != nil {
					failed++
				}
				mine = append(mine, time.Since(t0))
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
		b.Fatalf("%d of %d operations failed", failures, b.N)
	}
	latency.Report(b, latencies, elapsed, unit)
}

// BenchmarkEnrollment measures whole enrollments (both steps: token check,
// Workload registration, signing, the serial recorded, the token's use
// counted) through the HTTPS listener against the real API server.
func BenchmarkEnrollment(b *testing.B) {
	base := benchServer(b)
	ns := env.NewNamespace(b)
	p := newPolicy(b, ns, policySpec(24*time.Hour, time.Hour))
	token, _ := newToken(b, p, time.Hour)
	clients := make([]*benchAgent, benchClients)
	for i := range clients {
		clients[i] = newBenchAgent(b)
	}
	run(b, "enrollments/s", func(i int) error {
		_, err := clients[i].enroll(base, token)
		return err
	})
}

// BenchmarkRenewal measures renewals of enrolled workloads, each by its
// current certificate.
func BenchmarkRenewal(b *testing.B) {
	base := benchServer(b)
	ns := env.NewNamespace(b)
	p := newPolicy(b, ns, policySpec(24*time.Hour, time.Hour))
	token, _ := newToken(b, p, time.Hour)
	clients := make([]*benchAgent, benchClients)
	for i := range clients {
		clients[i] = newBenchAgent(b)
		if _, err := clients[i].enroll(base, token); err != nil {
			b.Fatal(err)
		}
	}
	run(b, "renewals/s", func(i int) error { return clients[i].renew(base) })
}

// benchAgent is a minimal agent: a key, an identity, its current certificate.
type benchAgent struct {
	key  *ecdsa.PrivateKey
	uuid string
	cert tls.Certificate
	c    *http.Client
}

func newBenchAgent(b *testing.B) *benchAgent {
	return &benchAgent{key: testpki.Key(b), c: benchClient(nil)}
}

func benchClient(cert *tls.Certificate) *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(benchBundle)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	tr := &http.Transport{TLSClientConfig: cfg}
	if cert != nil {
		// A renewal presents the certificate it renews: a new connection
		// each time, as an agent renewing once per lifetime would open.
		cfg.Certificates = []tls.Certificate{*cert}
		tr.DisableKeepAlives = true
	}
	return &http.Client{Timeout: time.Minute, Transport: tr}
}

func benchPost(c *http.Client, url string, body, out any) error {
	data, _ := json.Marshal(body)
	resp, err := c.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

func (a *benchAgent) csr(id string) (string, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{enrollapi.WorkloadURI(id)}}, a.key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

func (a *benchAgent) enroll(base, token string) (string, error) {
	var reg enrollapi.EnrollResponse
	if err := benchPost(a.c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token, Hostname: "bench"}, &reg); err != nil {
		return "", err
	}
	csr, err := a.csr(reg.UUID)
	if err != nil {
		return "", err
	}
	var resp enrollapi.CertificateResponse
	if err := benchPost(a.c, base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: csr}, &resp); err != nil {
		return "", err
	}
	return reg.UUID, a.keep(reg.UUID, resp.Certificate)
}

func (a *benchAgent) renew(base string) error {
	csr, err := a.csr(a.uuid)
	if err != nil {
		return err
	}
	var resp enrollapi.CertificateResponse
	if err := benchPost(benchClient(&a.cert), base+enrollapi.PathRenewal(a.uuid), enrollapi.RenewalRequest{CSR: csr}, &resp); err != nil {
		return err
	}
	return a.keep(a.uuid, resp.Certificate)
}

func (a *benchAgent) keep(id, certPEM string) error {
	blk, _ := pem.Decode([]byte(certPEM))
	if blk == nil {
		return fmt.Errorf("no certificate in the answer")
	}
	a.uuid = id
	a.cert = tls.Certificate{Certificate: [][]byte{blk.Bytes}, PrivateKey: a.key}
	return nil
}
