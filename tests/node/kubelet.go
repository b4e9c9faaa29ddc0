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
	"strconv"
	"strings"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/ports"
)

// NodeName is the name the node registers under.
const NodeName = "credo-node"

// APIServerFlags are what the control plane needs for a node: the Node
// authorizer beside RBAC and the NodeRestriction admission plugin, as a
// real cluster runs them, and kubelet reached on its node's InternalIP (the
// default tries the Hostname first, which no DNS here resolves). Pass them
// as controlplane.Options.APIServerFlags.
func APIServerFlags() map[string]string {
	return map[string]string{
		"authorization-mode":              "Node,RBAC",
		"enable-admission-plugins":        "NodeRestriction",
		"kubelet-preferred-address-types": "InternalIP,Hostname",
	}
}

// kubeletConfig is kubelet's configuration for this machine: cgroup v1
// (hybrid layout) accepted, the cgroupfs driver (no systemd), swap
// tolerated, every path kubelet writes under its own directory, its
// endpoints on ports of their own, anonymous requests from the API server
// allowed (the test control plane has no kubelet client certificate; a
// firewall rule keeps everyone else out, see closeToNetwork), and
// eviction thresholds low enough that a busy disk does not taint the node.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: {{endpoint}}
port: {{port}}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {{healthz}}
podLogsDir: {{dir}}/pod-logs
staticPodPath: ""
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
protectKernelDefaults: false
evictionHard:
  memory.available: 1Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`

// Kubelet is a kubelet registered with an Environment.
type Kubelet struct {
	Dir  string
	proc *controlplane.Process
}

// StartKubelet starts kubelet against env and the runtime, with its root
// and certificates under dir and a client certificate for
// system:node:NodeName in system:nodes.
func StartKubelet(ctx context.Context, env *controlplane.Environment, rt *Containerd, dir string) (*Kubelet, error) {
	assets, err := controlplane.AssetsDir()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(assets, "kubelet")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("kubelet not built (run hack/build-control-plane.sh node): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := ports.Free()
	if err != nil {
		return nil, err
	}
	healthz, err := ports.Free()
	if err != nil {
		return nil, err
	}
	if err := closeToNetwork(ctx, port); err != nil {
		return nil, err
	}
	cfg := strings.NewReplacer("{{endpoint}}", rt.Endpoint(), "{{port}}", strconv.Itoa(port),
		"{{healthz}}", strconv.Itoa(healthz), "{{dir}}", dir).Replace(kubeletConfig)
	cfgPath := filepath.Join(dir, "kubelet.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	kubeconfig, err := env.WriteKubeconfig("system:node:"+NodeName, []string{"system:nodes"}, "kubelet.kubeconfig")
	if err != nil {
		return nil, err
	}
	k := &Kubelet{Dir: dir}
	k.proc, err = env.StartProcess("kubelet", bin, nil,
		"--config="+cfgPath,
		"--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(dir, "root"),
		"--cert-dir="+filepath.Join(dir, "pki"),
		"--hostname-override="+NodeName,
		"--v=2",
	)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Process is kubelet's process.
func (k *Kubelet) Process() *controlplane.Process { return k.proc }

// StartScheduler starts kube-scheduler as system:kube-scheduler, which the
// built-in RBAC bindings authorize.
func StartScheduler(env *controlplane.Environment) (*controlplane.Process, error) {
	assets, err := controlplane.AssetsDir()
	if err != nil {
		return nil, err
	}
	kubeconfig, err := env.WriteKubeconfig("system:kube-scheduler", nil, "kube-scheduler.kubeconfig")
	if err != nil {
		return nil, err
	}
	return env.StartProcess("kube-scheduler", filepath.Join(assets, "kube-scheduler"), nil,
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	)
}

// closeToNetwork drops connections to kubelet's port that do not come
// through the loopback interface: kubelet answers anonymous requests (exec,
// logs, port-forward), so only this machine's processes, kube-apiserver
// among them (its connections to the node's InternalIP go through lo), may
// reach it; the machine's network and the pods may not. The rules go with
// the host's restore, as every rule added after its snapshot does.
func closeToNetwork(ctx context.Context, port int) error {
	for _, bin := range []string{"iptables", "ip6tables"} {
		args := []string{"-w", "-I", "INPUT", "-p", "tcp", "--dport", strconv.Itoa(port), "!", "-i", "lo", "-j", "DROP"}
		if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, out)
		}
	}
	return nil
}
