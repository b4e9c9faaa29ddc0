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
// control plane with credo's and Flux's CRDs, every credo controller binary
// as a process against it, and config/samples applied. `make dev` and the
// e2e suite (when given no cluster) run on it.
package devenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/controlplane"
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
}

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
	KubectlPath string

	// EnrollmentURL is where agents reach the enrollment listener.
	EnrollmentURL string

	// kubeconfigs are the controllers' own, by controller name.
	kubeconfigs   map[string]string
	accessAPIPort int
}

// PlatformNamespace is where credo keeps platform accounts' passwords.
const PlatformNamespace = "credo-system"

// ServiceAccount is the ServiceAccount config/manager runs the named
// controller binary as, in PlatformNamespace.
func ServiceAccount(controller string) string { return "credo-" + controller }

// rbacConfig is what the controllers' identities are bound by, as shipped:
// config/rbac (each controller's generated roles, ServiceAccount and
// bindings) and the access API's delegated authentication and
// authorization, bound to the credential-controller's ServiceAccount.
var rbacConfig = [][]string{
	{"-k", "config/rbac"},
	{"-f", "config/apiservice/auth_delegator.yaml"},
}

// grantControllerRBAC applies rbacConfig and returns, per controller, the
// kubeconfig of its ServiceAccount's user: each binary runs with the RBAC
// config/rbac gives its ServiceAccount, and nothing more.
func (e *Environment) grantControllerRBAC(ctx context.Context, root string) (map[string]string, error) {
	// The platform namespace holds the kept passwords of platform accounts
	// and the controllers' ServiceAccounts.
	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PlatformNamespace}}); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", PlatformNamespace, err)
	}
	// credo itself, installed as Flux installs it: the release the embedded
	// enrollment CA is published under as a trust anchor.
	install := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: InstallRelease, Namespace: PlatformNamespace},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "credo", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "credo"},
			}},
		},
	}
	if err := e.Client.Create(ctx, install); err != nil {
		return nil, fmt.Errorf("creating HelmRelease %s/%s: %w", PlatformNamespace, InstallRelease, err)
	}
	for _, source := range rbacConfig {
		if out, err := e.Kubectl(ctx, "apply", "--server-side", source[0], filepath.Join(root, source[1])); err != nil {
			return nil, fmt.Errorf("applying %s: %w\n%s", source[1], err, out)
		}
	}
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
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: opts.Dir, Aggregation: true})
	if err != nil {
		return nil, err
	}
	e := &Environment{Environment: cp, KubectlPath: filepath.Join(assets, "kubectl")}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	// Each controller runs as its own ServiceAccount's user, bound by the
	// roles config/rbac ships, so the RBAC they are installed with is the
	// RBAC they are tested with.
	if e.kubeconfigs, err = e.grantControllerRBAC(ctx, root); err != nil {
		return nil, err
	}
	if err := e.applyTenantRoles(ctx, root); err != nil {
		return nil, err
	}
	for _, name := range Controllers {
		c, err := e.startController(ctx, name, filepath.Join(opts.BinDir, name))
		if err != nil {
			return nil, err
		}
		e.Controllers = append(e.Controllers, c)
	}
	if err := e.registerAccessAPI(ctx); err != nil {
		return nil, err
	}
	if opts.Samples != "-" {
		if out, err := e.Kubectl(ctx, "apply", "--server-side", "-k", opts.Samples); err != nil {
			return nil, fmt.Errorf("applying %s: %w\n%s", opts.Samples, err, out)
		}
	}
	return e, nil
}

// tenantRoles are the ClusterRoles credo aggregates into the built-in
// view, edit and admin roles; kube-controller-manager's
// clusterrole-aggregation controller folds them in, so a user bound to
// view, edit or admin here gets what a tenant gets in a cluster.
var tenantRoles = []string{
	"config/rbac/trustanchor_viewer_role.yaml",
	"config/rbac/enrollment_roles.yaml",
	"config/apiservice/roles.yaml",
}

// applyTenantRoles applies tenantRoles.
func (e *Environment) applyTenantRoles(ctx context.Context, root string) error {
	args := []string{"apply", "--server-side"}
	for _, f := range tenantRoles {
		args = append(args, "-f", filepath.Join(root, f))
	}
	if out, err := e.Kubectl(ctx, args...); err != nil {
		return fmt.Errorf("applying the tenant roles: %w\n%s", err, out)
	}
	return nil
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
	if c.MetricsAddr, err = freeAddr(); err != nil {
		return c, err
	}
	if c.HealthAddr, err = freeAddr(); err != nil {
		return c, err
	}
	args := []string{"--metrics-addr=" + c.MetricsAddr, "--health-addr=" + c.HealthAddr, "--log-level=debug"}
	if name == accessAPIController {
		if e.accessAPIPort, err = freePort(); err != nil {
			return c, err
		}
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
			if addr, err = freeAddr(); err != nil {
				return c, err
			}
			e.EnrollmentURL = "https://" + addr
		}
		args = append(args, "--namespace="+PlatformNamespace, "--enrollment-addr="+addr,
			"--enrollment-hosts=127.0.0.1,localhost")
	}
	c.Process, err = e.StartProcess(name, binary, []string{"KUBECONFIG=" + e.kubeconfigs[name]}, args...)
	if err != nil {
		return c, err
	}
	url := "http://" + c.HealthAddr + "/readyz"
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Process.FailIfExited(); err != nil {
			return false, err
		}
		resp, err := http.Get(url) //nolint:gosec // loopback probe of our own process
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return c, fmt.Errorf("waiting for %s to be ready (log: %s): %w\n%s", name, c.Process.LogPath(), err, tail(c.Process.LogPath(), 20))
	}
	return c, nil
}

// RestartController stops the named controller and starts it again with
// the same configuration, as a rollout would.
func (e *Environment) RestartController(ctx context.Context, name string) error {
	for i, c := range e.Controllers {
		if c.Name != name {
			continue
		}
		if err := c.Process.Stop(10 * time.Second); err != nil {
			return fmt.Errorf("stopping %s: %w", name, err)
		}
		binary := c.Process.Binary()
		next, err := e.startController(ctx, name, binary)
		if err != nil {
			return err
		}
		e.Controllers[i] = next
		return nil
	}
	return fmt.Errorf("no controller %s", name)
}

// accessAPIController is the binary that serves access.credo.dev.
const accessAPIController = "credential-controller"

// enrollmentController serves the enrollment listener and keeps the
// embedded CA in PlatformNamespace.
const enrollmentController = "enrollment-controller"

// InstallRelease is the HelmRelease credo is installed by, as Flux would
// install it: the embedded enrollment CA is published under it.
const InstallRelease = "credo"

// registerAccessAPI lets kube-apiserver proxy access.credo.dev to the
// credential-controller's server on loopback, so that `kubectl credo mint`
// works against the development environment.
func (e *Environment) registerAccessAPI(ctx context.Context) error {
	ca, err := accessapi.CABundleFromCertDir(filepath.Join(e.Dir, "access-api"))
	if err != nil {
		return fmt.Errorf("reading the access API's CA: %w", err)
	}
	return accessapi.Register(ctx, e.Config, accessapi.Registration{Port: int32(e.accessAPIPort), CABundle: ca})
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
