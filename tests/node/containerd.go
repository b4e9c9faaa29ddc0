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
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/credo-dev/credo/tests/controlplane"
)

// Network is the pods' private network: a bridge of its own on a subnet
// unlikely to clash with the machine's.
const (
	Bridge = "credo0"
	Subnet = "10.244.77.0/24"
	// CNINetwork names the conflist; the CNI plugins name their iptables
	// chains and host-local its state directory after it.
	CNINetwork = "credo-node"
)

// Containerd is Debian's containerd running from a configuration of its
// own: root, state, socket and CNI configuration under Dir, nothing of the
// machine's /etc/containerd or /var/lib/containerd used.
type Containerd struct {
	Dir    string
	Socket string
	proc   *controlplane.Process
}

// config is containerd 1.6's configuration (version 2). The one setting
// that matters on these machines is restrict_oom_score_adj: a process here
// cannot lower its oom_score_adj below 0, and without it runc fails with
// "can't get final child's PID from pipe: EOF".
const config = `version = 2
root = "{{dir}}/root"
state = "{{dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "{{dir}}/containerd.sock"

[ttrpc]
  address = "{{dir}}/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{pause}}"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{{dir}}/cni"
    max_conf_num = 1
`

// conflist is the pods' network: bridge with host-local addresses, portmap
// for hostPort, loopback for lo.
const conflist = `{
  "cniVersion": "1.0.0",
  "name": "{{network}}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "{{bridge}}",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{dir}}/ipam",
        "ranges": [[{"subnet": "{{subnet}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
`

func render(tmpl, dir string) string {
	return strings.NewReplacer("{{dir}}", dir, "{{pause}}", PauseImage, "{{network}}", CNINetwork,
		"{{bridge}}", Bridge, "{{subnet}}", Subnet).Replace(tmpl)
}

// StartContainerd writes the configuration into dir and starts containerd,
// waiting until it answers on its socket.
func StartContainerd(ctx context.Context, dir string) (*Containerd, error) {
	c := &Containerd{Dir: dir, Socket: filepath.Join(dir, "containerd.sock")}
	if err := os.MkdirAll(filepath.Join(dir, "cni"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(render(config, dir)), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cni", "10-credo.conflist"), []byte(render(conflist, dir)), 0o644); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd not installed (apt-get install containerd runc containernetworking-plugins iptables conntrack): %w", err)
	}
	if c.proc, err = controlplane.StartProcessIn(dir, "containerd", bin, nil, "--config", filepath.Join(dir, "config.toml")); err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.proc.FailIfExited(); err != nil {
			return false, err
		}
		_, err := c.Ctr(ctx, "version")
		return err == nil, nil
	})
	if err != nil {
		_ = c.proc.Stop(5 * time.Second)
		return nil, fmt.Errorf("waiting for containerd: %w\n%s", err, c.proc.Tail(20))
	}
	return c, nil
}

// Endpoint is the CRI endpoint kubelet is given.
func (c *Containerd) Endpoint() string { return "unix://" + c.Socket }

// Ctr runs ctr against this containerd in the CRI's namespace.
func (c *Containerd) Ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.Socket, "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Import imports an OCI layout tar (WriteLayoutTar) into the CRI's
// namespace, under the name its index.json annotates.
func (c *Containerd) Import(ctx context.Context, tarPath string) error {
	_, err := c.Ctr(ctx, "images", "import", "--all-platforms", tarPath)
	return err
}

// Stop stops containerd, then what it leaves behind: the shims of
// containers still running (found by the socket on their command line),
// and mounts under Dir.
func (c *Containerd) Stop() error {
	err := c.proc.Stop(10 * time.Second)
	killShims(c.Socket)
	unmountUnder(c.Dir)
	return err
}
