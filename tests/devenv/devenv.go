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

// Package devenv runs the whole of credo on the local control plane: the
// control plane with Flux's CRDs, credo installed from config/default and
// config/apiservice as kustomize-controller would install it, every credo
// controller binary as a process against it under its shipped identity,
// and config/samples applied. `make dev` and the
// e2e suite (when given no cluster) run on it.
package devenv

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/ports"
)

// Controllers are the controller binaries (built into bin/ by `make build`)
// that the development environment runs.
var Controllers = []string{"trust-controller", "credential-controller", "enrollment-controller"}

// Options configures Start.
type Options struct {
	// Dir holds the kubeconfig and the logs; default a temporary directory.
	Dir string
	// BinDir holds the controller binaries; default <repo>/bin.
	BinDir string
	// Samples is the kustomization applied once the controllers are ready;
	// default <repo>/config/samples. "-" applies nothing.
	Samples string
	// Flux are the Flux controllers to run (out of
	// controlplane.FluxControllers), built by `make flux`; default
	// DefaultFlux.
	Flux []string
}

// DefaultFlux are the Flux controllers the environment runs by default:
// helm-controller, which installs and upgrades the releases credo feeds,
// and notification-controller, which receives credo's events (every credo
// controller gets its --events-addr) and routes them through Alerts.
var DefaultFlux = []string{controlplane.NotificationController, controlplane.HelmController}

// Controller is a running controller binary.
type Controller struct {
	Name        string
	Process     *controlplane.Process
	MetricsAddr string
	HealthAddr  string
}

// Environment is the running system.
type Environment struct {
	*controlplane.Environment
	Controllers []Controller
	// Flux are the running Flux controllers.
	Flux        *controlplane.Flux
	KubectlPath string

	// EnrollmentURL is where agents reach the enrollment listener.
	EnrollmentURL string
	// DemoTenantKubeconfig is DemoTenant's kubeconfig, whose context's
	// namespace is DemoNamespace; empty when no samples were applied.
	DemoTenantKubeconfig string

	// ExtraArgs are flags a controller is started with, by controller
	// name, besides those startController gives it: a test that restarts
	// a controller with a flag changed (RestartController) sets them.
	ExtraArgs map[string][]string

	// kubeconfigs are the controllers' own, by controller name.
	kubeconfigs   map[string]string
	accessAPIPort int
	installer     *installer
}

// PlatformNamespace is where credo keeps platform accounts' passwords.
const PlatformNamespace = "credo-system"

// ServiceAccount is the ServiceAccount config/manager runs the named
// controller binary as, in PlatformNamespace.
func ServiceAccount(controller string) string { return "credo-" + controller }

// controllerKubeconfigs returns, per controller, the kubeconfig of its
// ServiceAccount's user: each binary runs with the RBAC config/default and
// config/apiservice give its ServiceAccount, and nothing more.
func (e *Environment) controllerKubeconfigs() (map[string]string, error) {
	kubeconfigs := map[string]string{}
	for _, name := range Controllers {
		user, groups := controlplane.ServiceAccountUser(PlatformNamespace, ServiceAccount(name))
		path, err := e.WriteKubeconfig(user, groups, name+".kubeconfig")
		if err != nil {
			return nil, err
		}
		kubeconfigs[name] = path
	}
	return kubeconfigs, nil
}

// Start brings the system up. On error everything started is stopped.
//
// credo is installed as a user installs it: config/default and
// config/apiservice rendered with kustomize and applied as
// kustomize-controller applies them (see install), each controller binary
// then running as a process under its shipped ServiceAccount's identity.
func Start(ctx context.Context, opts Options) (_ *Environment, err error) {
	root := controlplane.RepoRoot()
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(root, "bin")
	}
	if opts.Samples == "" {
		opts.Samples = filepath.Join(root, "config", "samples")
	}
	assets, err := controlplane.AssetsDir()
	if err != nil {
		return nil, err
	}
	// Flux's CRDs are there before credo, as on a cluster Flux runs on;
	// credo's come from config/default. kube-controller-manager starts
	// once they are established (install).
	crdBases := filepath.Join(root, "config", "crd", "bases")
	var fluxCRDs []string
	for _, p := range controlplane.CRDPaths() {
		if p != crdBases {
			fluxCRDs = append(fluxCRDs, p)
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Dir: opts.Dir, Aggregation: true, CRDPaths: fluxCRDs, NoControllerManager: true,
	})
	if err != nil {
		return nil, err
	}
	e := &Environment{Environment: cp, KubectlPath: filepath.Join(assets, "kubectl")}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	if e.accessAPIPort, err = ports.Free(); err != nil {
		return nil, err
	}
	if e.installer, err = newInstaller(e.Config); err != nil {
		return nil, err
	}
	if err := e.install(ctx, root); err != nil {
		return nil, err
	}
	if opts.Flux == nil {
		opts.Flux = DefaultFlux
	}
	if e.Flux, err = e.StartFlux(ctx, controlplane.FluxOptions{Controllers: opts.Flux}); err != nil {
		return nil, err
	}
	if err := e.installNotificationComponent(ctx, root); err != nil {
		return nil, err
	}
	if err := e.installFluxTenantRoles(ctx); err != nil {
		return nil, err
	}
	if e.kubeconfigs, err = e.controllerKubeconfigs(); err != nil {
		return nil, err
	}
	for _, name := range Controllers {
		c, err := e.startController(ctx, name, filepath.Join(opts.BinDir, name))
		if err != nil {
			return nil, err
		}
		e.Controllers = append(e.Controllers, c)
	}
	// The credential-controller keeps the APIService's caBundle set to the
	// CA of its serving certificate, as in a cluster: nothing is patched in.
	if err := accessapi.WaitAvailable(ctx, e.Config, time.Minute); err != nil {
		return nil, err
	}
	if opts.Samples != "-" {
		if out, err := e.Kubectl(ctx, "apply", "--server-side", "-k", opts.Samples); err != nil {
			return nil, fmt.Errorf("applying %s: %w\n%s", opts.Samples, err, out)
		}
		if e.DemoTenantKubeconfig, _, err = e.Tenant(ctx, DemoTenant, DemoNamespace, "admin"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Kubectl runs the control plane's kubectl with the admin kubeconfig.
func (e *Environment) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	args = append([]string{"--kubeconfig", e.Kubeconfig}, args...)
	return exec.CommandContext(ctx, e.KubectlPath, args...).CombinedOutput()
}

// startController runs one controller binary on free loopback ports and
// waits until its readiness probe answers.
func (e *Environment) startController(ctx context.Context, name, binary string) (Controller, error) {
	c := Controller{Name: name}
	var err error
	if c.MetricsAddr, err = ports.Addr(); err != nil {
		return c, err
	}
	if c.HealthAddr, err = ports.Addr(); err != nil {
		return c, err
	}
	args := []string{"--metrics-addr=" + c.MetricsAddr, "--health-addr=" + c.HealthAddr, "--log-level=debug"}
	if e.Flux != nil && e.Flux.EventsURL != "" {
		args = append(args, "--events-addr="+e.Flux.EventsURL)
	}
	if name == AccessAPIController {
		// The port config/apiservice was installed with (writeAPIServiceOverlay).
		args = append(args,
			"--access-api-secure-port="+strconv.Itoa(e.accessAPIPort),
			"--access-api-bind-address=127.0.0.1",
			"--access-api-cert-dir="+filepath.Join(e.Dir, "access-api"),
			"--access-api-kubeconfig="+e.kubeconfigs[name])
	}
	if name == enrollmentController {
		// A restarted controller listens where agents know it.
		addr := strings.TrimPrefix(e.EnrollmentURL, "https://")
		if addr == "" {
			if addr, err = ports.Addr(); err != nil {
				return c, err
			}
			e.EnrollmentURL = "https://" + addr
		}
		args = append(args, "--namespace="+PlatformNamespace, "--enrollment-addr="+addr,
			"--enrollment-hosts=127.0.0.1,localhost")
	}
	args = append(args, e.ExtraArgs[name]...)
	c.Process, err = e.StartProcess(name, binary, []string{"KUBECONFIG=" + e.kubeconfigs[name]}, args...)
	if err != nil {
		return c, err
	}
	if err := c.Process.WaitReady(ctx, "http://"+c.HealthAddr+"/readyz", time.Minute); err != nil {
		return c, err
	}
	return c, nil
}

// RestartController stops the named controller and starts it again with
// the same configuration, as a rollout would.
func (e *Environment) RestartController(ctx context.Context, name string) error {
	if err := e.StopController(name); err != nil {
		return err
	}
	return e.StartController(ctx, name)
}

// StopController stops the named controller, as when every replica of it
// is gone: for the access API's credential-controller, kube-apiserver then
// finds no server behind the APIService.
func (e *Environment) StopController(name string) error {
	c, err := e.Controller(name)
	if err != nil {
		return err
	}
	if err := c.Process.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stopping %s: %w", name, err)
	}
	return nil
}

// StartController starts the named controller, stopped by StopController,
// again with the same configuration, and waits until it is ready. A running
// controller is not started twice.
func (e *Environment) StartController(ctx context.Context, name string) error {
	for i, c := range e.Controllers {
		if c.Name != name {
			continue
		}
		if ok, _ := c.Process.Exited(); !ok {
			return fmt.Errorf("%s is running", name)
		}
		next, err := e.startController(ctx, name, c.Process.Binary())
		if err != nil {
			return err
		}
		e.Controllers[i] = next
		return nil
	}
	return fmt.Errorf("no controller %s", name)
}

// Controller returns the named controller as it runs now (a restart gives
// it new metrics and health addresses).
func (e *Environment) Controller(name string) (Controller, error) {
	for _, c := range e.Controllers {
		if c.Name == name {
			return c, nil
		}
	}
	return Controller{}, fmt.Errorf("no controller %s", name)
}

// AccessAPIController is the binary that serves access.credo.dev.
const AccessAPIController = "credential-controller"

// enrollmentController serves the enrollment listener and keeps the
// embedded CA in PlatformNamespace.
const enrollmentController = "enrollment-controller"

// InstallRelease is the name the enrollment-controller publishes its
// embedded CA under (--enrollment-ca-release, default credo): the
// TrustAnchor it declares in PlatformNamespace and the projection
// credo.tenant-ca. As on every install, no HelmRelease of the name exists.
const InstallRelease = "credo"
