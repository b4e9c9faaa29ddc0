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

package controlplane_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/tests/controlplane"
)

// A kube-apiserver slow to shut down, as on a loaded machine, still stops
// cleanly: Stop waits for it (StopTimeout) rather than failing after
// envtest's 20 seconds, which ended `make dev` with "timeout waiting for
// process kube-apiserver to stop" though everything had stopped. Frozen
// (SIGSTOP) when asked to stop, kube-apiserver takes up SIGTERM only once
// thawed, 25 seconds later.
func TestStopWaitsForASlowKubeAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	slow, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir(), NoControllerManager: true})
	g.Expect(err).NotTo(HaveOccurred())
	pid := apiServerPID(t, slow)

	g.Expect(syscall.Kill(pid, syscall.SIGSTOP)).To(Succeed())
	stopped := make(chan error, 1)
	go func() { stopped <- slow.Stop() }()
	time.Sleep(25 * time.Second)
	_ = syscall.Kill(pid, syscall.SIGCONT) // gone already if Stop gave up and killed it

	select {
	case err := <-stopped:
		g.Expect(err).NotTo(HaveOccurred(), "kube-apiserver stopped by itself once it could")
	case <-time.After(controlplane.StopTimeout):
		t.Fatal("Stop did not return")
	}
	g.Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH), "kube-apiserver is gone")
}

// apiServerPID finds the kube-apiserver serving env by its --secure-port.
func apiServerPID(t *testing.T, env *controlplane.Environment) int {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("--secure-port=" + u.Port() + "\x00")
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmdline, []byte("kube-apiserver\x00")) || !bytes.Contains(cmdline, want) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	t.Fatalf("no kube-apiserver process serves %s", env.Config.Host)
	return 0
}
