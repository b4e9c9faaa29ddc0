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

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// needNode skips unless CREDO_NODE=1 and the test runs as root: a node
// changes the machine (a bridge, iptables rules, cgroups) until it stops.
func needNode(t *testing.T) {
	t.Helper()
	if os.Getenv("CREDO_NODE") == "" {
		t.Skip("set CREDO_NODE=1 to run a real node (root, containerd, runc and the CNI plugins installed)")
	}
	if os.Geteuid() != 0 {
		t.Skip("a real node needs root")
	}
}

// startRuntime starts containerd with the pause image imported, and
// restores the host when the test ends.
func startRuntime(t *testing.T, ctx context.Context) (*Containerd, string) {
	t.Helper()
	g := NewWithT(t)
	host, err := SnapshotHost()
	g.Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "credo-node-")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		for _, p := range hostPaths {
			if _, err := os.Stat(p); err == nil && !host.paths[p] {
				t.Logf("created outside the node's directory: %s", p)
			}
		}
		if err := host.Restore(); err != nil {
			t.Errorf("restoring the host: %v", err)
		}
		// kubelet bind-mounts its root directory onto itself.
		unmountUnder(dir)
		if !t.Failed() || os.Getenv("CREDO_NODE_KEEP") == "" {
			if err := os.RemoveAll(dir); err != nil {
				t.Errorf("removing the node's directory: %v", err)
			}
		}
	})
	c, err := StartContainerd(ctx, filepath.Join(dir, "containerd"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("containerd log:\n%s", c.proc.Tail(40))
		}
		_ = c.Stop()
	})
	pause, err := BuildPause(ctx, dir)
	g.Expect(err).NotTo(HaveOccurred())
	tarPath := filepath.Join(dir, "pause.tar")
	g.Expect(WriteLayoutTar(filepath.Join(dir, "pause-layout"), tarPath, PauseImage, pause, nil)).To(Succeed())
	g.Expect(c.Import(ctx, tarPath)).To(Succeed())
	return c, dir
}

func TestContainerd(t *testing.T) {
	needNode(t)
	g := NewWithT(t)
	ctx := t.Context()
	c, _ := startRuntime(t, ctx)
	out, err := c.Ctr(ctx, "version")
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("%s", out)
	out, err = c.Ctr(ctx, "plugins", "ls")
	g.Expect(err).NotTo(HaveOccurred())
	var cri string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "io.containerd.grpc.v1") && strings.Contains(l, "cri") {
			cri = strings.TrimSpace(l)
		}
	}
	g.Expect(cri).To(HaveSuffix("ok"), out)
	out, err = c.Ctr(ctx, "images", "ls", "-q")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring(PauseImage))
}
