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
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/ports"
)

// kubeProxyConfig runs kube-proxy in iptables mode for the pods' subnet,
// changing no conntrack sysctl (every conntrack setting 0 leaves the
// kernel's) and not routing NodePorts on localhost (which would set
// route_localnet).
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {{kubeconfig}}
mode: iptables
clusterCIDR: {{subnet}}
hostnameOverride: {{node}}
healthzBindAddress: 127.0.0.1:{{healthz}}
metricsBindAddress: 127.0.0.1:{{metrics}}
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`

// StartProxy starts kube-proxy as system:kube-proxy (the built-in
// system:node-proxier binding authorizes it), its configuration in dir.
func StartProxy(env *controlplane.Environment, dir string) (*controlplane.Process, error) {
	assets, err := controlplane.AssetsDir()
	if err != nil {
		return nil, err
	}
	kubeconfig, err := env.WriteKubeconfig("system:kube-proxy", nil, "kube-proxy.kubeconfig")
	if err != nil {
		return nil, err
	}
	healthz, err := ports.Free()
	if err != nil {
		return nil, err
	}
	metrics, err := ports.Free()
	if err != nil {
		return nil, err
	}
	cfg := strings.NewReplacer("{{kubeconfig}}", kubeconfig, "{{subnet}}", Subnet, "{{node}}", NodeName,
		"{{healthz}}", strconv.Itoa(healthz), "{{metrics}}", strconv.Itoa(metrics)).Replace(kubeProxyConfig)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "kube-proxy.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return env.StartProcess("kube-proxy", filepath.Join(assets, "kube-proxy"), nil, "--config="+path, "--v=2")
}

// StartNodeControllers starts a second kube-controller-manager with the
// controllers a node needs that the test control plane's does not run:
// EndpointSlices for Services, the default ServiceAccounts, the node
// lifecycle controller (which removes kubelet's not-ready taint),
// Deployments and their ReplicaSets, PodDisruptionBudgets (the eviction
// API reads their status) and the pod garbage collector. On an
// InCluster Environment it also publishes the serving CA as the
// kube-root-ca.crt ConfigMap in every namespace (the projected token
// volume's ca.crt) and runs the ServiceAccount token controller.
func StartNodeControllers(env *controlplane.Environment) (*controlplane.Process, error) {
	assets, err := controlplane.AssetsDir()
	if err != nil {
		return nil, err
	}
	kubeconfig, err := env.WriteKubeconfig("kube-controller-manager-node", []string{"system:masters"}, "kube-controller-manager-node.kubeconfig")
	if err != nil {
		return nil, err
	}
	controllers := "endpointslice-controller,endpointslice-mirroring-controller,serviceaccount-controller,node-lifecycle-controller," +
		"deployment-controller,replicaset-controller,disruption-controller,pod-garbage-collector-controller"
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		fmt.Sprintf("--cluster-cidr=%s", Subnet),
	}
	if env.ServingCAFile != "" {
		controllers += ",root-ca-certificate-publisher-controller,serviceaccount-token-controller"
		args = append(args, "--root-ca-file="+env.ServingCAFile,
			"--service-account-private-key-file="+env.ServiceAccountKeyFile)
	}
	args = append(args, "--controllers="+controllers)
	return env.StartProcess("kube-controller-manager-node", filepath.Join(assets, "kube-controller-manager"), nil, args...)
}
