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

package accessapi_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/accessapi"
)

// A replica's readiness follows its access API: ready while the API waits
// for its bindings (it is not installed), not ready once built until its
// server serves, ready while it serves, and not ready as soon as it is told
// to stop, while it goes on serving for the shutdown delay; then it closes.
func TestReadinessFollowsTheAccessAPI(t *testing.T) {
	g := NewWithT(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	opts := accessapi.NewOptions()
	opts.Listener = ln
	opts.Kubeconfig = filepath.Join(env.Dir, "access-api.kubeconfig") // setup's, with the delegated-auth bindings
	opts.CertDir = t.TempDir()
	opts.ShutdownDelay = 3 * time.Second
	srv, err := accessapi.New(opts, &accessapi.Operations{Client: platform, AccountReader: platform, Keys: keys})
	g.Expect(err).NotTo(HaveOccurred())

	r := accessapi.NewReadiness()
	g.Expect(r.Check(nil)).To(Succeed(), "waiting for the bindings: ready")
	accessapi.MarkStarting(r, srv)
	g.Expect(r.Check(nil)).To(MatchError(ContainSubstring("does not answer")), "built, not serving")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	g.Eventually(func() error { return r.Check(nil) }, time.Minute, 100*time.Millisecond).Should(Succeed(), "serving")

	cancel()
	stopped := time.Now()
	g.Eventually(func() error { return r.Check(nil) }, 2*time.Second, 50*time.Millisecond).
		Should(MatchError(ContainSubstring("not ready")), "told to stop: not ready at once")
	insecure := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}} //nolint:gosec // the test's own server
	resp, err := insecure.Get("https://" + ln.Addr().String() + "/livez")
	g.Expect(err).NotTo(HaveOccurred(), "still serving during the shutdown delay")
	resp.Body.Close()
	g.Expect(time.Since(stopped)).To(BeNumerically("<", opts.ShutdownDelay))
	g.Eventually(done, time.Minute).Should(Receive(BeNil()))
	g.Expect(time.Since(stopped)).To(BeNumerically(">=", opts.ShutdownDelay), "served the whole delay")
	g.Expect(r.Check(nil)).To(MatchError(ContainSubstring("does not answer")), "closed")
}
