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

package security

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxkustomize "github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

var fluxRolesOnce sync.Once

// fluxTenantRoles applies Flux's own flux-view and flux-edit ClusterRoles
// (copied by `make flux` from the flux2 module) once, and waits until
// kube-controller-manager has aggregated flux-edit into the built-in edit.
func fluxTenantRoles(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	var err error
	fluxRolesOnce.Do(func() {
		var dir string
		if dir, err = controlplane.FluxAssetsDir(filepath.Join("rbac", "edit.yaml"), filepath.Join("rbac", "view.yaml")); err != nil {
			return
		}
		for _, f := range []string{"view.yaml", "edit.yaml"} {
			if err = env.ApplyFile(context.Background(), filepath.Join(dir, "rbac", f), "flux"); err != nil {
				return
			}
		}
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() bool {
		var edit rbacv1.ClusterRole
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "edit"}, &edit)).To(Succeed())
		for _, r := range edit.Rules {
			for _, grp := range r.APIGroups {
				if grp == helmv2.GroupVersion.Group {
					return true
				}
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond).Should(BeTrue(), "flux-edit is aggregated into edit")
}

// platformRelease creates, as the platform, a HelmRelease that delivers a
// platform account through valuesFrom, as the credential-controller leaves
// it: its entry first, the release labelled.
func platformRelease(t *testing.T, ns string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "ch", Namespace: ns, Labels: map[string]string{credv1.PlatformValuesLabel: "true"}},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "clickhouse", Namespace: "cozy-public"},
			ValuesFrom: []helmv2.ValuesReference{
				{Kind: "Secret", Name: "ch.root.account", ValuesKey: credv1.PasswordKey, TargetPath: "users.root.password_sha256_hex"},
				{Kind: "Secret", Name: "cozystack-values", ValuesKey: "values.yaml"},
			},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), hr)).To(Succeed())
	return hr
}

// A tenant bound to the built-in edit role, with Flux's flux-edit
// aggregated into it (it may write every Flux kind, HelmReleases' spec and
// status included), may not change how a release that delivers a platform
// account gets its values: its valuesFrom, post-renderers, chart, the
// label, or its status. It keeps the rest of its release: values, suspend,
// interval, annotations. helm-controller writes the status. A release that
// delivers no platform account is not evaluated.
// (docs/security.md, "What each tenant reaches".)
func TestAFluxEditTenantCannotRerouteAPlatformRelease(t *testing.T) {
	admissionPolicy(t)
	fluxTenantRoles(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	bind(t, ns, "mallory", "edit")
	tenant := userClient(t, "mallory")
	hr := platformRelease(t, ns)
	mine := helmv2.ValuesReference{Kind: "ConfigMap", Name: "mine", ValuesKey: "hash", TargetPath: "users.root.password_sha256_hex"}

	write := func(c client.Client, status bool, mutate func(*helmv2.HelmRelease)) error {
		cur := &helmv2.HelmRelease{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(hr), cur)).To(Succeed())
		patch := client.MergeFrom(cur.DeepCopy())
		mutate(cur)
		if status {
			return c.Status().Patch(ctx, cur, patch)
		}
		return c.Patch(ctx, cur, patch)
	}
	for _, tt := range []struct {
		what   string
		status bool
		mutate func(*helmv2.HelmRelease)
	}{
		{"its own entry first at the account's path", false, func(hr *helmv2.HelmRelease) {
			hr.Spec.ValuesFrom = append([]helmv2.ValuesReference{mine}, hr.Spec.ValuesFrom...)
		}},
		{"credo's entry removed", false, func(hr *helmv2.HelmRelease) { hr.Spec.ValuesFrom = hr.Spec.ValuesFrom[1:] }},
		{"the entries reordered", false, func(hr *helmv2.HelmRelease) {
			hr.Spec.ValuesFrom = []helmv2.ValuesReference{hr.Spec.ValuesFrom[1], hr.Spec.ValuesFrom[0]}
		}},
		{"a post-renderer", false, func(hr *helmv2.HelmRelease) {
			hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []fluxkustomize.Patch{{Patch: "[]", Target: &fluxkustomize.Selector{Kind: "ConfigMap"}}}}}}
		}},
		{"another chart", false, func(hr *helmv2.HelmRelease) { hr.Spec.ChartRef.Name = "mine" }},
		{"a chart template instead of the chartRef", false, func(hr *helmv2.HelmRelease) {
			hr.Spec.ChartRef = nil
			hr.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "mine", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "mine"}}}
		}},
		{"the label removed", false, func(hr *helmv2.HelmRelease) { delete(hr.Labels, credv1.PlatformValuesLabel) }},
		{"a forged status", true, func(hr *helmv2.HelmRelease) { hr.Status.LastHandledReconcileAt = "credo:2099-01-01T00:00:00Z" }},
	} {
		// The first waits until kube-apiserver enforces the policy.
		g.Eventually(func() error { return write(tenant, tt.status, tt.mutate) }, 20*time.Second, 200*time.Millisecond).ShouldNot(Succeed(), tt.what)
		expectRefused(g, write(tenant, tt.status, tt.mutate), tt.what)
	}

	g.Expect(write(tenant, false, func(hr *helmv2.HelmRelease) {
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"root":{"password_sha256_hex":"0"}},"replicas":2}`)}
		hr.Spec.Suspend = true
		hr.Annotations = map[string]string{"reconcile.fluxcd.io/requestedAt": "now"}
	})).To(Succeed(), "its values, suspend and annotations stay the tenant's")

	labelled := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: ns, Labels: map[string]string{credv1.PlatformValuesLabel: "true"}},
		Spec:       *hr.Spec.DeepCopy(),
	}
	expectRefused(g, tenant.Create(ctx, labelled), "a release created with the label")

	helm := userClient(t, "system:serviceaccount:flux-system:helm-controller")
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "helm-controller", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "helm-controller", Namespace: "flux-system"}},
	})).To(Succeed())
	g.Eventually(func() error {
		return write(helm, true, func(hr *helmv2.HelmRelease) { hr.Status.LastHandledReconcileAt = "helm-controller" })
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed(), "helm-controller writes the status")

	free := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "free", Namespace: ns}, Spec: *hr.Spec.DeepCopy()}
	g.Expect(tenant.Create(ctx, free)).To(Succeed(), "a release with no platform account is the tenant's")
	patch := client.MergeFrom(free.DeepCopy())
	free.Spec.ValuesFrom = append([]helmv2.ValuesReference{mine}, free.Spec.ValuesFrom...)
	g.Expect(tenant.Patch(ctx, free, patch)).To(Succeed())
}
