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

package enrollment

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/tests/enrolldriver"
)

// TestConcurrentEnrollmentsWithOneTokenAllSucceed runs the shipped wiring:
// the enrollment server built by NewServer on the manager whose Workload
// reconciler writes the Workloads step 1 registers. Agents enrolling at
// once with one token are all enrolled.
func TestConcurrentEnrollmentsWithOneTokenAllSucceed(t *testing.T) {
	const agents, rounds = 8, 5
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "agents")
	tok, err := jointoken.New()
	g.Expect(err).NotTo(HaveOccurred())
	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: "agents", SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))},
	}
	g.Expect(env.Client.Create(ctx, jt)).To(Succeed())
	base, trusted := startWiredServer(t, ns, agents)

	var (
		mu      sync.Mutex
		refused []string
		wg      sync.WaitGroup
	)
	for range agents {
		wg.Go(func() {
			for range rounds {
				a, err := enrolldriver.NewAgent(trusted)
				if err == nil {
					err = a.Enroll(base, tok.String())
				}
				if err != nil {
					mu.Lock()
					refused = append(refused, enrolldriver.Key(err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	g.Expect(refused).To(BeEmpty(), "of %d enrollments", agents*rounds)
}

// startWiredServer serves NewServer's server, signing with the embedded CA
// kept in ns, on 127.0.0.1 until the test ends; it returns its URL and the
// CA's bundle.
func startWiredServer(t *testing.T, ns string, agents int) (string, *x509.CertPool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	caOpts := embedded.NewOptions()
	caOpts.Namespace = ns
	authority, err := embedded.New(caOpts, env.Client, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := authority.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	bundle, err := authority.Bundle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	opts := enrollment.NewOptions()
	opts.FailedAttemptsBurst = 0
	opts.Limits.MaxPendingPerToken = 2 * agents
	opts.Log = ctrl.Log.WithName("enrollment-server")
	srv, err := NewServer(env.Setup, authority, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeListener(ctx, tls.NewListener(ln, enrollment.TLSConfig(authority.GetCertificate([]string{"127.0.0.1"}))))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return "https://" + ln.Addr().String(), roots
}
