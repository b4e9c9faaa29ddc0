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
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

const (
	// tmTrustNamespace is trust-manager's trust namespace, where every
	// Bundle's source lives (--trust-namespace).
	tmTrustNamespace = "cert-manager"
	// tmSelectLabel on a namespace selects it as a target of the Bundle
	// named by its value.
	tmSelectLabel = "bench.credo.dev/bundle"
	// tmTargetLabel is the label trust-manager puts on every target,
	// valued with its Bundle's name.
	tmTargetLabel = "trust.cert-manager.io/bundle"
	// tmWait bounds each wait for targets: the release build sends 5
	// requests a second, so 1,000 Bundles take minutes.
	tmWait = 30 * time.Minute
)

// tmLayout places the targets of the benchmark's Bundles. With perNamespace
// (CREDO_BENCH_TRUST_MANAGER_LAYOUT unset or "namespaces"), Bundle app-0001
// selects the namespace tenant-app-0001 alone, by a label valued app-0001:
// N sources, each projected to its own target in its own namespace. With
// "namespace", every Bundle selects the one namespace tenant-bench, where
// its target is the Secret of its name: the layout of credo's own
// benchmarks, whose N releases and projections share one namespace.
type tmLayout struct{ perNamespace bool }

func tmLayoutFromEnv(b *testing.B) tmLayout {
	switch v := os.Getenv("CREDO_BENCH_TRUST_MANAGER_LAYOUT"); v {
	case "", "namespaces":
		return tmLayout{perNamespace: true}
	case "namespace":
		return tmLayout{}
	default:
		b.Fatalf("CREDO_BENCH_TRUST_MANAGER_LAYOUT=%q: want namespaces or namespace", v)
		return tmLayout{}
	}
}

func (l tmLayout) String() string {
	if l.perNamespace {
		return "namespaces"
	}
	return "namespace"
}

// namespace is where the target of Bundle name is written.
func (l tmLayout) namespace(name string) string {
	if l.perNamespace {
		return "tenant-" + name
	}
	return "tenant-bench"
}

// selector is the value of tmSelectLabel that Bundle name selects.
func (l tmLayout) selector(name string) string {
	if l.perNamespace {
		return name
	}
	return "all"
}

// target is the key (namespace/name) of Bundle name's target.
func (l tmLayout) target(name string) string { return l.namespace(name) + "/" + name }

// tmName is the name of the i-th Bundle, as credo's benchmarks name their
// releases.
func tmName(i int) string { return fmt.Sprintf("app-%04d", i) }

// createTrustNamespaces creates the trust namespace and, with one target
// namespace for all, that namespace.
func createTrustNamespaces(b *testing.B, c client.Client, l tmLayout) {
	ctx := context.Background()
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tmTrustNamespace}}))
	if !l.perNamespace {
		must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: l.namespace(""), Labels: map[string]string{tmSelectLabel: l.selector("")}}}))
	}
}

// createBundle creates what Bundle name needs and the Bundle: its target
// namespace (one per Bundle), its source Secret in the trust namespace
// (key ca.crt holding certPEM) and the Bundle, projecting that key to a
// Secret target (key ca.crt) in the namespaces it selects. It returns the
// source.
func createBundle(ctx context.Context, c client.Client, l tmLayout, name string, certPEM []byte) (*corev1.Secret, error) {
	if l.perNamespace {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: l.namespace(name), Labels: map[string]string{tmSelectLabel: l.selector(name)}}}); err != nil {
			return nil, err
		}
	}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-ca", Namespace: tmTrustNamespace},
		Data: map[string][]byte{"ca.crt": certPEM}}
	if err := c.Create(ctx, src); err != nil {
		return nil, err
	}
	bundle := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "trust.cert-manager.io/v1alpha1",
		"kind":       "Bundle",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"sources": []any{map[string]any{"secret": map[string]any{"name": src.Name, "key": "ca.crt"}}},
			"target": map[string]any{
				"secret":            map[string]any{"key": "ca.crt"},
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{tmSelectLabel: l.selector(name)}},
			},
		},
	}}
	return src, c.Create(ctx, bundle)
}

// tmProc is a trust-manager process.
type tmProc struct {
	*controlplane.Process
	// metrics and ready are the loopback addresses of its metrics
	// endpoint and its readiness probe.
	metrics, ready string
}

// startTrustManager starts binary against env as a process: the Bundle
// controller with Secret targets, its trust namespace cert-manager, no
// leader election (one replica, as credo's benchmarks run theirs). Its
// webhook server cannot be turned off; it listens on loopback with a
// self-signed certificate, and no webhook configuration sends it anything.
// It does not wait for readiness.
func startTrustManager(b *testing.B, env *controlplane.Environment, binary string) *tmProc {
	tlsDir, err := os.MkdirTemp(env.Dir, "trust-manager-tls-")
	must(b, err)
	cert := testpki.SelfSigned(b, testpki.Serving())
	must(b, os.WriteFile(filepath.Join(tlsDir, "tls.crt"), cert.CertPEM(), 0o600))
	must(b, os.WriteFile(filepath.Join(tlsDir, "tls.key"), testpki.KeyPEM(b, cert), 0o600))
	metrics, ready, webhook := testenv.FreePort(b), testenv.FreePort(b), testenv.FreePort(b)
	proc, err := env.StartProcess("trust-manager", binary, []string{"GOMAXPROCS=2"},
		"--trust-namespace="+tmTrustNamespace,
		"--secret-targets-enabled=true",
		"--leader-elect=false",
		"--metrics-port="+strconv.Itoa(metrics),
		"--readiness-probe-port="+strconv.Itoa(ready),
		"--webhook-host=127.0.0.1",
		"--webhook-port="+strconv.Itoa(webhook),
		"--webhook-certificate-dir="+tlsDir)
	must(b, err)
	return &tmProc{Process: proc, metrics: "127.0.0.1:" + strconv.Itoa(metrics), ready: "127.0.0.1:" + strconv.Itoa(ready)}
}

// waitReady waits until trust-manager's readiness probe answers.
func (p *tmProc) waitReady(b *testing.B) {
	must(b, p.WaitReady(context.Background(), "http://"+p.ready+"/readyz", 2*time.Minute))
}

// waitIdle waits until trust-manager's Bundle controller has had nothing
// queued, nothing running and the process no request sent (its
// rest_client_requests_total, every client of it, the event recorder's
// too) for a second, then a second more: the counterpart of credo's
// benchmark waiting for its work queue. Events trail the reconciles, on a
// rate limiter of their own in the release build.
func (p *tmProc) waitIdle(b *testing.B) {
	var idleSince time.Time
	last := -1.0
	for deadline := time.Now().Add(tmWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		must(b, p.FailIfExited())
		busy, sent := p.busy()
		if busy || sent != last {
			idleSince, last = time.Time{}, sent
			continue
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		if time.Since(idleSince) > time.Second {
			time.Sleep(time.Second)
			return
		}
	}
	b.Fatalf("trust-manager was still busy after %v", tmWait)
}

// busy reports whether the Bundle controller has a request queued or being
// reconciled, and the requests the process has sent; busy when its
// metrics cannot be read.
func (p *tmProc) busy() (bool, float64) {
	families, err := testenv.Scrape(p.metrics)
	if err != nil {
		return true, -1
	}
	for _, name := range []string{"workqueue_depth", "controller_runtime_active_workers"} {
		for _, m := range families[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "bundles" && m.GetGauge().GetValue() > 0 {
					return true, -1
				}
			}
		}
	}
	var sent float64
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		sent += m.GetCounter().GetValue()
	}
	return false, sent
}

// watchTargets watches every target of trust-manager (Secrets labelled
// with their Bundle), in all namespaces.
func watchTargets(b *testing.B, env *controlplane.Environment) watch.Interface {
	cs := kubernetes.NewForConfigOrDie(env.Config)
	w, err := cs.CoreV1().Secrets("").Watch(context.Background(), metav1.ListOptions{LabelSelector: tmTargetLabel})
	must(b, err)
	return w
}

// waitTargets waits until each target (namespace/name) in want has been
// seen on w holding, in ca.crt, exactly the certificate want gives (DER),
// or anything when nil; failing if the process exits.
func waitTargets(b *testing.B, w watch.Interface, p *tmProc, want map[string][]byte) {
	left := len(want)
	seen := make(map[string]bool, left)
	timeout := time.After(tmWait)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for left > 0 {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				b.Fatalf("the watch of targets closed with %d of %d not seen", left, len(want))
			}
			s, ok := ev.Object.(*corev1.Secret)
			if !ok {
				continue
			}
			key := s.Namespace + "/" + s.Name
			if seen[key] {
				continue
			}
			if der, ok := want[key]; ok && (der == nil || holdsOnly(s.Data["ca.crt"], der)) {
				seen[key] = true
				left--
			}
		case <-tick.C:
			must(b, p.FailIfExited())
		case <-timeout:
			var missing []string
			for key := range want {
				if !seen[key] && len(missing) < 5 {
					missing = append(missing, key)
				}
			}
			b.Fatalf("%d of %d targets not seen within %v, e.g. %v", left, len(want), tmWait, missing)
		}
	}
}

// holdsOnly reports whether bundle (PEM) holds exactly one certificate,
// der: trust-manager writes the certificates it read again, so the bytes
// may differ from the source's.
func holdsOnly(bundle, der []byte) bool {
	block, rest := pem.Decode(bundle)
	if block == nil || block.Type != "CERTIFICATE" || !bytes.Equal(block.Bytes, der) {
		return false
	}
	next, _ := pem.Decode(rest)
	return next == nil
}

// certDER is the DER of the (one) certificate in certPEM.
func certDER(b *testing.B, certPEM []byte) []byte {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		b.Fatal("no PEM certificate")
	}
	return block.Bytes
}
