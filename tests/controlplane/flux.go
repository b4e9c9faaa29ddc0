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

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/ports"
)

// The Flux controllers StartFlux runs, by binary name.
const (
	SourceController       = "source-controller"
	KustomizeController    = "kustomize-controller"
	HelmController         = "helm-controller"
	NotificationController = "notification-controller"
)

// FluxNamespace is the runtime namespace of the Flux controllers, where their
// ServiceAccounts live.
const FluxNamespace = "flux-system"

// FluxControllers are the Flux controllers StartFlux knows, in start order:
// notification-controller first, so the others post their events to it.
var FluxControllers = []string{NotificationController, SourceController, KustomizeController, HelmController}

// FluxAssetsDir returns the directory holding the Flux binaries:
// $CREDO_FLUX_ASSETS when set, else the cache hack/build-flux.sh builds into.
// It fails, naming the command to run, when one of binaries is missing.
func FluxAssetsDir(binaries ...string) (string, error) {
	dir := os.Getenv("CREDO_FLUX_ASSETS")
	if dir == "" {
		cache, err := cacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "credo", "flux")
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("flux binary %s not found in %s (run `make flux`): %w", b, dir, err)
		}
	}
	return dir, nil
}

// FluxOptions configures StartFlux.
type FluxOptions struct {
	// Controllers to run, out of FluxControllers; default all of them.
	Controllers []string
	// LogLevel of every controller; default info.
	LogLevel string
}

// Flux is the set of running Flux controllers.
type Flux struct {
	// Controllers by name.
	Controllers map[string]*FluxController
	// EventsURL is where notification-controller receives events (what the
	// other controllers get as --events-addr); empty when it does not run.
	EventsURL string
	// ReceiverAddr is notification-controller's webhook receiver address.
	ReceiverAddr string
	// StorageAddr is where source-controller serves its artifacts.
	StorageAddr string
}

// FluxController is one running Flux controller.
type FluxController struct {
	Name    string
	Process *Process
	// Kubeconfig authenticates as the controller's ServiceAccount.
	Kubeconfig  string
	HealthAddr  string
	MetricsAddr string
}

// fluxRBAC is the Namespace, ServiceAccounts and RBAC of a real Flux install.
func fluxRBAC() string {
	return filepath.Join(RepoRoot(), "tests", "controlplane", "testdata", "flux-rbac.yaml")
}

// StartFlux applies the identities and RBAC of a real Flux install
// (testdata/flux-rbac.yaml) and runs the chosen Flux controllers as processes,
// each as its own ServiceAccount in FluxNamespace on free loopback ports,
// watching all namespaces, without leader election. It returns once every
// controller's readiness probe answers; on error it stops those it started.
func (e *Environment) StartFlux(ctx context.Context, opts FluxOptions) (_ *Flux, err error) {
	names := opts.Controllers
	if len(names) == 0 {
		names = FluxControllers
	}
	for _, n := range names {
		if !slices.Contains(FluxControllers, n) {
			return nil, fmt.Errorf("unknown Flux controller %q", n)
		}
	}
	assets, err := FluxAssetsDir(names...)
	if err != nil {
		return nil, err
	}
	if err := e.ApplyFile(ctx, fluxRBAC(), "credo-tests"); err != nil {
		return nil, err
	}
	logLevel := opts.LogLevel
	if logLevel == "" {
		logLevel = "info"
	}
	f := &Flux{Controllers: map[string]*FluxController{}}
	defer func() {
		if err != nil {
			_ = f.Stop()
		}
	}()
	for _, name := range FluxControllers {
		if !slices.Contains(names, name) {
			continue
		}
		c := &FluxController{Name: name}
		if c.HealthAddr, err = ports.Addr(); err != nil {
			return nil, err
		}
		if c.MetricsAddr, err = ports.Addr(); err != nil {
			return nil, err
		}
		args := []string{
			"--health-addr=" + c.HealthAddr, "--metrics-addr=" + c.MetricsAddr,
			"--enable-leader-election=false", "--watch-all-namespaces=true",
			"--log-level=" + logLevel, "--log-encoding=console",
		}
		extra, err := f.flags(e, name)
		if err != nil {
			return nil, err
		}
		args = append(args, extra...)
		user, groups := ServiceAccountUser(FluxNamespace, name)
		if c.Kubeconfig, err = e.WriteKubeconfig(user, groups, name+".kubeconfig"); err != nil {
			return nil, err
		}
		env := []string{"KUBECONFIG=" + c.Kubeconfig, "RUNTIME_NAMESPACE=" + FluxNamespace}
		if c.Process, err = e.StartProcess(name, filepath.Join(assets, name), env, args...); err != nil {
			return nil, err
		}
		f.Controllers[name] = c
	}
	for _, name := range names {
		c := f.Controllers[name]
		if err := c.Process.WaitReady(ctx, "http://"+c.HealthAddr+"/readyz", 2*time.Minute); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Stop stops the controllers (Environment.Stop stops them otherwise).
func (f *Flux) Stop() error {
	var errs []error
	for _, c := range f.Controllers {
		errs = append(errs, c.Process.Stop(10*time.Second))
	}
	return errors.Join(errs...)
}

// flags are the controller's own flags: the listeners of notification-controller
// and source-controller, where to post events, and the feature gates.
func (f *Flux) flags(e *Environment, name string) ([]string, error) {
	var args []string
	switch name {
	case NotificationController:
		events, err := ports.Addr()
		if err != nil {
			return nil, err
		}
		if f.ReceiverAddr, err = ports.Addr(); err != nil {
			return nil, err
		}
		f.EventsURL = "http://" + events + "/"
		return []string{"--events-addr=" + events, "--receiverAddr=" + f.ReceiverAddr}, nil
	case SourceController:
		var err error
		if f.StorageAddr, err = ports.Addr(); err != nil {
			return nil, err
		}
		// An emptyDir in a real install.
		storage := filepath.Join(e.Dir, "source-storage")
		if err := os.MkdirAll(storage, 0o700); err != nil {
			return nil, err
		}
		args = append(args, "--storage-path="+storage,
			"--storage-addr="+f.StorageAddr, "--storage-adv-addr="+f.StorageAddr)
	case KustomizeController, HelmController:
		args = append(args, "--feature-gates=ExternalArtifact=true")
	}
	if f.EventsURL != "" {
		args = append(args, "--events-addr="+f.EventsURL)
	}
	return args, nil
}

// ApplyFile applies every object of a multi-document YAML file with
// server-side apply under fieldOwner, forcing ownership.
func (e *Environment) ApplyFile(ctx context.Context, path, fieldOwner string) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	dec := yaml.NewYAMLOrJSONDecoder(file, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s from %s: %w", u.GetKind(), u.GetName(), path, err)
		}
	}
}
