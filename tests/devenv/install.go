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

package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// installer installs kustomizations as kustomize-controller does: built
// with kustomize/api, normalized, server-side applied by fluxcd/pkg/ssa's
// ResourceManager under one field manager, in stages (cluster definitions,
// then the rest), and waited for with kstatus.
type installer struct {
	rm *ssa.ResourceManager
}

// FieldManager is the field manager of everything the development
// environment installs.
const FieldManager = "credo-devenv"

// installTimeout bounds each stage's wait.
const installTimeout = 2 * time.Minute

func newInstaller(cfg *rest.Config) (*installer, error) {
	// The client's REST mapper finds kinds whose CRDs the first stage
	// installed.
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("creating the installer's client: %w", err)
	}
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	return &installer{rm: ssa.NewResourceManager(c, poller, ssa.Owner{Field: FieldManager, Group: "devenv.credo.dev"})}, nil
}

// build renders the kustomizations in dirs into normalized objects.
func build(dirs ...string) ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	for _, dir := range dirs {
		objs, err := testenv.Kustomize(dir)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	if err := normalize.UnstructuredList(all); err != nil {
		return nil, fmt.Errorf("normalizing the objects: %w", err)
	}
	return all, nil
}

// splitDefinitions separates the cluster definitions (CRDs, Namespaces,
// ClusterRoles), the first stage of ssa's ApplyAllStaged, from the rest.
func splitDefinitions(objs []*unstructured.Unstructured) (defs, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		if ssautils.IsClusterDefinition(o) {
			defs = append(defs, o)
		} else {
			rest = append(rest, o)
		}
	}
	return defs, rest
}

// apply server-side applies objs (kustomize-controller's default options:
// no force) and waits until those that can become ready are Current: CRDs
// Established, Namespaces Active, the rest on being stored. Deployments are
// applied but not waited for: the control plane has no kubelet (nor a
// deployment controller), so they never run; the controller binaries run
// as processes instead, under the identities of the ServiceAccounts and
// bindings applied here.
func (in *installer) apply(ctx context.Context, objs []*unstructured.Unstructured) (*ssa.ChangeSet, error) {
	cs, err := in.rm.ApplyAll(ctx, objs, ssa.DefaultApplyOptions())
	if err != nil {
		return cs, fmt.Errorf("applying: %w", err)
	}
	var ready object.ObjMetadataSet
	for _, e := range cs.Entries {
		if e.ObjMetadata.GroupKind.Kind != "Deployment" {
			ready = append(ready, e.ObjMetadata)
		}
	}
	if err := in.rm.WaitForSetWithContext(ctx, ready, ssa.WaitOptions{Interval: time.Second, Timeout: installTimeout}); err != nil {
		return cs, fmt.Errorf("waiting for the applied objects: %w", err)
	}
	return cs, nil
}

// apiServiceOverlay is the kustomization the development environment
// applies config/apiservice through. It patches only what a control plane
// without cluster networking must: kube-apiserver resolves a Service of
// type ExternalName to externalName and the APIService's port, so the
// Service points at localhost and both name the port the
// credential-controller process serves the access API on, on loopback.
// spec.caBundle is the credential-controller's to keep, as in a cluster.
const apiServiceOverlay = `# Written by tests/devenv: config/apiservice as shipped, patched where a
# local control plane (no cluster network; the credential-controller runs
# as a process on loopback) differs from a cluster.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %[1]s
patches:
  - target:
      kind: Service
      name: credo-access
    patch: |
      - op: replace
        path: /spec/type
        value: ExternalName
      - op: add
        path: /spec/externalName
        value: localhost
      - op: replace
        path: /spec/ports/0/port
        value: %[2]d
      - op: replace
        path: /spec/ports/0/targetPort
        value: %[2]d
  - target:
      kind: APIService
      name: v1alpha1.access.credo.dev
    patch: |
      - op: replace
        path: /spec/service/port
        value: %[2]d
`

// writeAPIServiceOverlay writes apiServiceOverlay into dir for the access
// API on port, and returns dir.
func writeAPIServiceOverlay(dir string, port int) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	// kustomize refuses absolute paths in resources.
	base, err := filepath.Rel(dir, filepath.Join(controlplane.RepoRoot(), "config", "apiservice"))
	if err != nil {
		return "", err
	}
	k := fmt.Sprintf(apiServiceOverlay, base, port)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return "", fmt.Errorf("writing the config/apiservice overlay: %w", err)
	}
	return dir, nil
}

// install renders config/default and config/apiservice (through
// writeAPIServiceOverlay) and applies
// them in kustomize-controller's stages: the cluster definitions, then
// kube-controller-manager (its garbage collector discovers resource types
// at start, then only every 30 seconds), then the rest. The ServiceAccounts,
// roles and bindings the controllers run under, the Service and the
// APIService are all the shipped ones: nothing is made in Go.
func (e *Environment) install(ctx context.Context, root string) error {
	return e.applyManifests(ctx, root, e.StartControllerManager)
}

// applyManifests applies config/default and config/apiservice (the latter
// as APIServiceManifests writes it): the definitions first, then between
// (nil: nothing), then the rest.
func (e *Environment) applyManifests(ctx context.Context, root string, between func(context.Context) error) error {
	overlay, err := writeAPIServiceOverlay(e.APIServiceManifests(), e.accessAPIPort)
	if err != nil {
		return err
	}
	objs, err := build(filepath.Join(root, "config", "default"), overlay)
	if err != nil {
		return err
	}
	defs, rest := splitDefinitions(objs)
	if _, err := e.installer.apply(ctx, defs); err != nil {
		return fmt.Errorf("installing credo's CRDs, namespace and cluster roles: %w", err)
	}
	if between != nil {
		if err := between(ctx); err != nil {
			return err
		}
	}
	if _, err := e.installer.apply(ctx, rest); err != nil {
		return fmt.Errorf("installing config/default and config/apiservice: %w", err)
	}
	return nil
}

// APIServiceManifests is the directory of config/apiservice as this
// environment installs it (a kustomization pointing the APIService's
// Service at the credential-controller process): what `kubectl delete -k
// config/apiservice` names in a cluster.
func (e *Environment) APIServiceManifests() string {
	return filepath.Join(e.Dir, "apiservice")
}

// Reinstall installs credo again as `make dev` first did, over whatever an
// uninstall kept (docs/guides/uninstall.md), starts every controller that
// is stopped, and waits until the access API's APIService is Available.
func (e *Environment) Reinstall(ctx context.Context) error {
	if err := e.applyManifests(ctx, controlplane.RepoRoot(), nil); err != nil {
		return err
	}
	for _, c := range e.Controllers {
		if ok, _ := c.Process.Exited(); !ok {
			continue
		}
		if err := e.StartController(ctx, c.Name); err != nil {
			return err
		}
	}
	return accessapi.WaitAvailable(ctx, e.Config, time.Minute)
}

// installNotificationComponent applies config/notification as its
// kustomization tells users to: as a component of the kustomization that
// installs Flux, here the Alert CRD the control plane started with (so
// that Alerts may select credo's kinds) and the read access it gives
// notification-controller's ServiceAccount.
func (e *Environment) installNotificationComponent(ctx context.Context, root string) error {
	dir := filepath.Join(e.Dir, "flux-notification")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	crd, err := os.ReadFile(filepath.Join(root, "config", "testdata", "crds", "notification.toolkit.fluxcd.io_alerts.yaml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts-crd.yaml"), crd, 0o600); err != nil {
		return err
	}
	component, err := filepath.Rel(dir, filepath.Join(root, "config", "notification"))
	if err != nil {
		return err
	}
	k := "# Written by tests/devenv: Flux's Alert CRD with credo's component, as in\n" +
		"# the flux-system kustomization of a bootstrapped cluster.\n" +
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
		"resources:\n  - alerts-crd.yaml\ncomponents:\n  - " + component + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return err
	}
	objs, err := build(dir)
	if err != nil {
		return err
	}
	defs, rest := splitDefinitions(objs)
	for _, stage := range [][]*unstructured.Unstructured{defs, rest} {
		if _, err := e.installer.apply(ctx, stage); err != nil {
			return fmt.Errorf("installing config/notification: %w", err)
		}
	}
	return nil
}
