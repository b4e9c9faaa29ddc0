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
	"path/filepath"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
)

// Flux's own tenant roles, as `flux install` creates them: flux-view is
// aggregated into view, edit and admin; flux-edit (create, update, patch
// and delete on every Flux kind and subresource, HelmReleases' spec and
// status among them) into edit and admin.
const (
	FluxViewRole = "flux-view"
	FluxEditRole = "flux-edit"
)

// installFluxTenantRoles applies Flux's flux-view and flux-edit
// ClusterRoles, copied by hack/build-flux.sh from the flux2 module of the
// CLI's version, and waits until kube-controller-manager has aggregated
// flux-edit into the built-in edit role.
func (e *Environment) installFluxTenantRoles(ctx context.Context) error {
	dir, err := controlplane.FluxAssetsDir(filepath.Join("rbac", "view.yaml"), filepath.Join("rbac", "edit.yaml"))
	if err != nil {
		return err
	}
	for _, f := range []string{"view.yaml", "edit.yaml"} {
		if err := e.ApplyFile(ctx, filepath.Join(dir, "rbac", f), "flux"); err != nil {
			return fmt.Errorf("installing Flux's tenant roles: %w", err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var edit rbacv1.ClusterRole
		if err := e.Client.Get(ctx, client.ObjectKey{Name: "edit"}, &edit); err == nil && grantsHelmReleases(edit.Rules) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-controller-manager did not aggregate %s into edit within a minute", FluxEditRole)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func grantsHelmReleases(rules []rbacv1.PolicyRule) bool {
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if g == "helm.toolkit.fluxcd.io" {
				return true
			}
		}
	}
	return false
}

// Tenant binds user to the built-in ClusterRole role (admin, edit or view,
// each with credo's and Flux's roles aggregated) in namespace ns, and
// returns its kubeconfig (whose context's namespace is ns) and REST
// config: a tenant as a platform that grants Flux's roles makes one.
func (e *Environment) Tenant(ctx context.Context, user, ns, role string) (string, *rest.Config, error) {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := e.Client.Create(ctx, rb); client.IgnoreAlreadyExists(err) != nil {
		return "", nil, fmt.Errorf("binding %s to %s in %s: %w", user, role, ns, err)
	}
	path, err := e.WriteKubeconfig(user, []string{"system:authenticated"}, user+".kubeconfig")
	if err != nil {
		return "", nil, err
	}
	if err := controlplane.SetKubeconfigNamespace(path, ns); err != nil {
		return "", nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return "", nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return path, cfg, nil
}
