//go:build node

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
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// cluster is the one node every test runs on, started by TestMain: tests
// run one at a time (none is parallel), each with names of its own, and
// delete their pods before they end.
var cluster *Cluster

// TestMain starts the node the tests share and stops it after them,
// restoring the host. The suite is built only with -tags node (make
// test-node), which asks for a real node: without root it fails rather
// than skips.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "tests/node: "+format+"\n", args...)
	}
	if os.Geteuid() != 0 {
		logf("a real node needs root (and containerd, runc and the CNI plugins: hack/node/install.sh); run make test-node as root")
		return 1
	}
	keep := os.Getenv("CREDO_NODE_KEEP") != ""
	var err error
	cluster, err = StartCluster(context.Background(), ClusterOptions{Keep: keep, Logf: logf})
	if err != nil {
		logf("starting the node: %v", err)
		return 1
	}
	code := m.Run()
	if testing.Verbose() {
		logf("kubelet warnings and errors:\n%s", warnings(cluster.Kubelet.Process().LogPath(), 60))
	}
	// Stop logs the paths the node created outside its directory.
	if err := cluster.Stop(); err != nil {
		logf("stopping the node and restoring the host: %v", err)
		if code == 0 {
			code = 1
		}
	}
	if keep {
		logf("the node's directory is kept: %s", cluster.Dir)
	}
	return code
}

// logsOnFailure logs the tails of the node's logs when t fails.
func logsOnFailure(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("containerd log:\n%s", cluster.Runtime.proc.Tail(40))
		t.Logf("kubelet log:\n%s", cluster.Kubelet.Process().Tail(60))
		t.Logf("kube-scheduler log:\n%s", cluster.Scheduler.Tail(30))
	})
}

// TestContainerd checks the node's runtime: ctr answers, the CRI plugin
// is loaded, the pause image is imported.
func TestContainerd(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	logsOnFailure(t)
	c := cluster.Runtime
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
