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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// rssBench measures trust-manager's memory once, in the order of
// BenchmarkTrustControllerRSS, and reports it on every run.
func (s *tmBench) rssBench(b *testing.B) {
	if s.rss == nil {
		s.rss = measureTrustManagerRSS(b, s.binary, s.crds, s.n, s.layout)
	}
	for unit, v := range s.rss {
		b.ReportMetric(v, unit)
	}
}

// measureTrustManagerRSS starts trust-manager on a control plane of its
// own and returns its VmRSS, and the part mapped from its file, at each
// moment of BenchmarkTrustControllerRSS: idle, with n Bundles projected
// (created while it runs, every source holding the same certificate, as
// there), after the unrelated Secrets, after a rotation.
func measureTrustManagerRSS(b *testing.B, binary, crds string, n int, l tmLayout) map[string]float64 {
	unrelated := envInt("CREDO_BENCH_UNRELATED", 10000)
	ctx := context.Background()
	env := testenv.ControlPlane(b, controlplane.Options{NoControllerManager: true,
		CRDPaths: append(controlplane.CRDPaths(), crds)})
	createTrustNamespaces(b, env.Client, l)
	p := startTrustManager(b, env, binary)
	p.waitReady(b)
	out := map[string]float64{}
	measure := func(moment string) int {
		time.Sleep(5 * time.Second)
		rss := medianRSS(b, p.PID())
		out["rss-"+moment+"-MiB"] = float64(rss) / 1024
		out["rss-file-"+moment+"-MiB"] = float64(statusKiB(b, p.PID(), "RssFile:")) / 1024
		return rss
	}
	idle := measure("idle")

	sources := make([]*corev1.Secret, n)
	for i := range n {
		var err error
		sources[i], err = createBundle(ctx, env.Client, l, tmName(i), testCert)
		must(b, err)
	}
	waitTargetCount(b, env.Client, p, n)
	withReleases := measure("releases")

	// A tenant's Secrets, in the namespace of a target, as
	// BenchmarkTrustControllerRSS writes them beside the releases.
	ns := l.namespace(tmName(0))
	payload := bytes.Repeat([]byte("x"), 10*1024)
	createConcurrently(b, unrelated, func(i int) error {
		return env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: ns},
			Data:       map[string][]byte{"blob": payload},
		})
	})
	// Give the informers time to receive every event before reading.
	time.Sleep(5 * time.Second)
	withUnrelated := measure("unrelated")

	rotateTrustManagerSource(b, env.Client, l, sources[0])
	measure("rotated")
	must(b, p.FailIfExited())
	out["MiB-per-1000-releases"] = float64(withReleases-idle) / 1024 * 1000 / float64(n)
	out["MiB-per-10000-unrelated"] = float64(withUnrelated-withReleases) / 1024 * 10000 / float64(max(unrelated, 1))
	out["unrelated-data-MiB"] = float64(unrelated) * 10 / 1024
	out["releases"] = float64(n)
	return out
}

// waitTargetCount waits until n targets exist.
func waitTargetCount(b *testing.B, c client.Client, p *tmProc, n int) {
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, tmWait, true, func(ctx context.Context) (bool, error) {
		if err := p.FailIfExited(); err != nil {
			return false, err
		}
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.HasLabels{tmTargetLabel}); err != nil {
			return false, err
		}
		return len(list.Items) == n, nil
	})
	must(b, err)
}

// rotateTrustManagerSource gives src a new CA certificate and waits until
// its Bundle's target holds it.
func rotateTrustManagerSource(b *testing.B, c client.Client, l tmLayout, src *corev1.Secret) {
	ctx := context.Background()
	ca, err := testpki.NewCA("rotated CA", testpki.NotAfter(time.Now().Add(24*time.Hour)))
	must(b, err)
	der := certDER(b, ca.CertPEM())
	must(b, c.Get(ctx, client.ObjectKeyFromObject(src), src))
	src.Data["ca.crt"] = ca.CertPEM()
	must(b, c.Update(ctx, src))
	name := src.Name[:len(src.Name)-len("-ca")]
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var target corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: l.namespace(name), Name: name}, &target); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return holdsOnly(target.Data["ca.crt"], der), nil
	})
	must(b, err)
}
