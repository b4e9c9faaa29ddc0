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
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/tests/controlplane"
)

// ClusterOptions configure a Cluster.
type ClusterOptions struct {
	// Dir holds the node: containerd's root, kubelet's, the control
	// plane's logs and kubeconfigs. Default a new temporary directory,
	// removed by Stop unless Keep.
	Dir string
	// Keep leaves Dir in place after Stop (for reading the logs).
	Keep bool
	// ControlPlane configures the control plane; InCluster and
	// Aggregation are always set, and APIServerFlags() is added to its
	// APIServerFlags.
	ControlPlane controlplane.Options
	// Logf reports progress; default nothing.
	Logf func(format string, args ...any)
}

// Cluster is a one-node cluster on this machine: a control plane that pods
// reach as in-cluster clients reach kube-apiserver, containerd with the
// pause image, kubelet, kube-scheduler, kube-proxy and the controllers a
// node's workloads need (Deployments, ReplicaSets, EndpointSlices,
// ServiceAccounts, PodDisruptionBudgets, node lifecycle).
type Cluster struct {
	Env     *controlplane.Environment
	Runtime *Containerd
	Kubelet *Kubelet
	// Scheduler, Proxy and Controllers are the node's other processes.
	Scheduler, Proxy, Controllers *controlplane.Process
	Dir                           string

	keep bool
	host *HostState
	logf func(string, ...any)
}

// StartCluster starts a Cluster and waits until its node is Ready. It
// changes the machine (a bridge, iptables rules, cgroups, sysctls) until
// Stop restores it: it needs root, and one Cluster at a time.
func StartCluster(ctx context.Context, opts ClusterOptions) (_ *Cluster, err error) {
	c := &Cluster{Dir: opts.Dir, keep: opts.Keep, logf: opts.Logf}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("a node needs root")
	}
	if c.host, err = SnapshotHost(); err != nil {
		return nil, fmt.Errorf("recording the host's state: %w", err)
	}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "credo-node-"); err != nil {
			return nil, err
		}
	} else {
		c.keep = true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if c.Runtime, err = StartContainerd(ctx, filepath.Join(c.Dir, "containerd")); err != nil {
		return nil, err
	}
	pause, err := BuildPause(ctx, c.Dir)
	if err != nil {
		return nil, err
	}
	if err := c.ImportImage(ctx, PauseImage, pause); err != nil {
		return nil, err
	}
	c.logf("containerd started, pause image imported")

	cp := opts.ControlPlane
	cp.InCluster, cp.Aggregation = true, true
	flags := APIServerFlags()
	maps.Copy(flags, cp.APIServerFlags)
	cp.APIServerFlags = flags
	if cp.Dir == "" {
		cp.Dir = filepath.Join(c.Dir, "controlplane")
		if err := os.MkdirAll(cp.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	if c.Env, err = controlplane.Start(ctx, cp); err != nil {
		return nil, err
	}
	c.logf("control plane started: %s", c.Env.Config.Host)
	if c.Kubelet, err = StartKubelet(ctx, c.Env, c.Runtime, filepath.Join(c.Dir, "kubelet")); err != nil {
		return nil, err
	}
	if c.Scheduler, err = StartScheduler(c.Env); err != nil {
		return nil, err
	}
	if c.Proxy, err = StartProxy(c.Env, filepath.Join(c.Dir, "kube-proxy")); err != nil {
		return nil, err
	}
	if c.Controllers, err = StartNodeControllers(c.Env); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := c.waitReady(ctx, 3*time.Minute); err != nil {
		return nil, err
	}
	c.logf("node %s Ready %s after kubelet started", NodeName, time.Since(start).Round(time.Second))
	return c, nil
}

// waitReady waits until the node is Ready and the default ServiceAccount
// exists (pods are refused without it).
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Kubelet.Process().FailIfExited(); err != nil {
			return false, fmt.Errorf("kubelet: %w\n%s", err, c.Kubelet.Process().Tail(30))
		}
		var node corev1.Node
		if err := c.Env.Client.Get(ctx, client.ObjectKey{Name: NodeName}, &node); err != nil {
			last = err.Error()
			return false, nil
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				var sa corev1.ServiceAccount
				err := c.Env.Client.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: "default"}, &sa)
				if err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
				last = "no default ServiceAccount yet"
				return err == nil, nil
			}
		}
		last = fmt.Sprintf("%+v", node.Status.Conditions)
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s: %w (last: %s)", NodeName, err, last)
	}
	return nil
}

// Stop stops the node's processes and the control plane, then restores
// the host: rules, bridge, network namespaces, cgroups, sysctls, mounts.
// Dir is removed unless it was given or Keep is set.
func (c *Cluster) Stop() error {
	var errs []error
	// The pods first: kube-apiserver's graceful shutdown otherwise waited
	// out its whole timeout on the connections of credo's controllers.
	if c.Kubelet != nil {
		errs = append(errs, c.Kubelet.Process().Stop(10*time.Second))
	}
	if c.Runtime != nil {
		errs = append(errs, c.Runtime.Stop())
	}
	if c.Env != nil {
		errs = append(errs, c.Env.Stop())
	}
	if c.host != nil {
		for _, p := range hostPaths {
			if _, err := os.Stat(p); err == nil && !c.host.paths[p] {
				c.logf("created outside the node's directory: %s", p)
			}
		}
		errs = append(errs, c.host.Restore())
	}
	if c.Dir != "" {
		// kubelet bind-mounts its root directory onto itself.
		unmountUnder(c.Dir)
		if !c.keep {
			errs = append(errs, os.RemoveAll(c.Dir))
		}
	}
	return errors.Join(errs...)
}

// ImportImage imports img into the runtime as name, for pods with
// imagePullPolicy Never.
func (c *Cluster) ImportImage(ctx context.Context, name string, img v1.Image) error {
	return c.importLayout(ctx, name, img, nil)
}

// ImportRelease imports the one image index of a release's OCI layout
// (hack/release build --out DIR: DIR/oci, which also holds its SBOMs,
// signatures and artifacts) under the name the layout gives it, and
// returns that name.
func (c *Cluster) ImportRelease(ctx context.Context, layoutDir string) (string, error) {
	idx, name, err := ReleaseIndex(layoutDir)
	if err != nil {
		return "", err
	}
	return name, c.importLayout(ctx, name, nil, idx)
}

func (c *Cluster) importLayout(ctx context.Context, name string, img v1.Image, idx v1.ImageIndex) error {
	scratch, err := os.MkdirTemp(c.Dir, "image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	tarPath := filepath.Join(scratch, "image.tar")
	if err := WriteLayoutTar(filepath.Join(scratch, "layout"), tarPath, name, img, idx); err != nil {
		return err
	}
	return c.Runtime.Import(ctx, tarPath)
}

// ReleaseIndex is the one image index in a release's OCI layout and the
// name (org.opencontainers.image.ref.name) the layout gives it.
func ReleaseIndex(dir string) (v1.ImageIndex, string, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, "", err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, "", err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		if d.MediaType == types.OCIImageIndex {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, "", fmt.Errorf("%s holds %d image indexes, want 1", dir, len(found))
	}
	name := found[0].Annotations[publish.RefAnnotation]
	if name == "" {
		return nil, "", fmt.Errorf("the image index in %s has no %s annotation", dir, publish.RefAnnotation)
	}
	idx, err := top.ImageIndex(found[0].Digest)
	return idx, name, err
}
