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

// Package controlplane runs a real Kubernetes control plane for credo's tests
// and for `make dev`: etcd, kube-apiserver (through controller-runtime's
// envtest) and kube-controller-manager with the garbage collector, the
// namespace controller and role aggregation, all built from source by hack/build-control-plane.sh.
//
// A fake client cannot prove owner-reference garbage collection, watches,
// RBAC or API aggregation; an Environment can.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credentialsv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollmentv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// Options configures an Environment.
type Options struct {
	// CRDPaths overrides the CRD directories to install; default CRDPaths().
	CRDPaths []string
	// NoControllerManager skips kube-controller-manager, for tests that need
	// neither garbage collection nor namespace deletion.
	NoControllerManager bool
	// APIServerFlags are extra kube-apiserver flags (name without dashes → value).
	APIServerFlags map[string]string
	// Dir is where the kubeconfig and component logs are written; default a
	// new temporary directory, removed by Stop.
	Dir string
	// Aggregation turns on kube-apiserver's aggregation layer: a front-proxy
	// CA and client certificate are generated into Dir and passed as the
	// --requestheader-* and --proxy-client-* flags.
	Aggregation bool
	// Audit writes kube-apiserver's audit log to Environment.AuditLogPath
	// with AuditPolicy, or DefaultAuditPolicy when empty.
	Audit bool
	// AuditPolicy is the audit policy (YAML) used when Audit is set.
	AuditPolicy string
	// InCluster makes kube-apiserver reachable by pods on a node as
	// in-cluster clients reach it (rest.InClusterConfig): bound to every
	// address, serving a certificate of Environment.ServingCAFile that names
	// the kubernetes Service's ClusterIP and DNS names, with the
	// ServiceAccount admission plugin and a signing key of
	// Environment.ServiceAccountKeyFile. Off, envtest's defaults stand:
	// 127.0.0.1 only, a certificate for localhost, no ServiceAccount
	// admission.
	InCluster bool
}

// Environment is a running control plane.
type Environment struct {
	// Config is a system:masters rest.Config for the API server.
	Config *rest.Config
	// Client is a controller-runtime client with Scheme.
	Client client.Client
	// Scheme knows the core, credo and Flux types.
	Scheme *runtime.Scheme
	// Kubeconfig is the path of a system:masters kubeconfig for kubectl and
	// for processes started against this control plane.
	Kubeconfig string
	// Dir holds the kubeconfig and the component logs.
	Dir string
	// AuditLogPath is kube-apiserver's audit log (JSON lines) when
	// Options.Audit is set; empty otherwise.
	AuditLogPath string
	// ServingCAFile is the CA of kube-apiserver's serving certificate, for
	// kube-controller-manager's --root-ca-file, when Options.InCluster is
	// set; empty otherwise.
	ServingCAFile string
	// ServiceAccountKeyFile is the ServiceAccount token signing key, for
	// kube-controller-manager's --service-account-private-key-file, when
	// Options.InCluster is set; empty otherwise.
	ServiceAccountKeyFile string

	env     *envtest.Environment
	kcm     *Process
	procs   []*Process
	ownsDir bool
}

// NewScheme returns a scheme with the core, credo and Flux types.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(helmv2.AddToScheme(s))
	utilruntime.Must(sourcev1.AddToScheme(s))
	utilruntime.Must(trustv1.AddToScheme(s))
	utilruntime.Must(credentialsv1.AddToScheme(s))
	utilruntime.Must(enrollmentv1.AddToScheme(s))
	utilruntime.Must(accessv1.AddToScheme(s))
	return s
}

// Start starts etcd and kube-apiserver, installs the CRDs, then starts
// kube-controller-manager (after the CRDs, because its garbage collector
// discovers new resource types only every 30 seconds) and waits until its
// garbage collector deletes dependents.
func Start(ctx context.Context, opts Options) (_ *Environment, err error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	e := &Environment{Scheme: NewScheme(), Dir: opts.Dir}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "credo-controlplane-"); err != nil {
			return nil, fmt.Errorf("creating the environment directory: %w", err)
		}
		e.ownsDir = true
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	crds := opts.CRDPaths
	if crds == nil {
		crds = CRDPaths()
	}
	e.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
		Scheme:                e.Scheme,
		// kube-apiserver drains its requests and watches before it exits;
		// envtest's 20 seconds were not always enough on a loaded machine,
		// and `make dev` ended with an error though everything stopped.
		ControlPlaneStopTimeout: StopTimeout,
	}
	args := e.env.ControlPlane.GetAPIServer().Configure()
	if opts.Aggregation {
		if err := e.configureAggregation(args); err != nil {
			return nil, err
		}
	}
	if opts.Audit {
		if err := e.configureAudit(args, opts.AuditPolicy); err != nil {
			return nil, err
		}
	}
	if opts.InCluster {
		if err := e.configureInCluster(args, opts.APIServerFlags["service-cluster-ip-range"]); err != nil {
			return nil, err
		}
	}
	for k, v := range opts.APIServerFlags {
		args.Set(k, v)
	}
	if e.Config, err = e.env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	if e.Kubeconfig, err = e.WriteKubeconfig("admin", []string{"system:masters"}, "kubeconfig"); err != nil {
		return nil, err
	}
	if opts.NoControllerManager {
		return e, nil
	}
	if err := e.startControllerManager(ctx, filepath.Join(assets, "kube-controller-manager")); err != nil {
		return nil, err
	}
	return e, nil
}

// WriteKubeconfig adds a user with a client certificate for the given
// groups and writes its kubeconfig into Dir under name. Without
// system:masters the user can do only what RBAC grants it.
func (e *Environment) WriteKubeconfig(user string, groups []string, name string) (string, error) {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("adding user %s: %w", user, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig for %s: %w", user, err)
	}
	path := filepath.Join(e.Dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, nil
}

// StopTimeout is how long Stop lets kube-apiserver, and then etcd, shut
// down gracefully before it kills them and reports that it had to.
const StopTimeout = time.Minute

// Stop stops kube-controller-manager, kube-apiserver and etcd, and removes
// the environment directory when Start created it.
func (e *Environment) Stop() error {
	var errs []error
	for i := len(e.procs) - 1; i >= 0; i-- {
		errs = append(errs, e.procs[i].Stop(10*time.Second))
	}
	if e.env != nil {
		errs = append(errs, e.env.Stop())
	}
	if e.ownsDir {
		errs = append(errs, os.RemoveAll(e.Dir))
	}
	return errors.Join(errs...)
}
