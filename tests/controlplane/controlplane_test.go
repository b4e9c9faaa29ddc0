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

package controlplane_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
)

var env *controlplane.Environment

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	env, err = controlplane.Start(ctx, controlplane.Options{})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
	}
	os.Exit(code)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gc-"}}
	g.Expect(env.Client.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

func TestGarbageCollectorDeletesProjectionWhenHelmReleaseIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	release := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart:     "postgres",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "cozystack"},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, release)).To(Succeed())

	dependent := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "pg.tenant-ca", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind,
			Name: release.Name, UID: release.UID, BlockOwnerDeletion: ptr.To(false),
		}},
	}}
	g.Expect(env.Client.Create(ctx, dependent)).To(Succeed())
	unowned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unowned", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, unowned)).To(Succeed())

	g.Expect(env.Client.Delete(ctx, release)).To(Succeed())

	g.Eventually(func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.Secret{})
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(),
		"kube-controller-manager should delete the Secret owned by the deleted HelmRelease")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(unowned), &corev1.Secret{})).To(Succeed(),
		"a Secret without an owner must survive")
}

func TestNamespaceControllerEmptiesAndRemovesNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())

	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	g.Eventually(func() bool {
		err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err)
	}, time.Minute, 200*time.Millisecond).Should(BeTrue(), "the namespace controller should finalize the namespace")
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the namespace's Secret should be gone, got %v", err)
}

// kube-apiserver's bootstrap roles view, edit and admin exist, and
// kube-controller-manager folds a role labelled aggregate-to-view into all
// three (view aggregates into edit, edit into admin), as credo's roles are.
func TestRoleAggregationFoldsLabelledRolesIntoViewEditAndAdmin(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	rule := rbacv1.PolicyRule{APIGroups: []string{"probe.credo.dev"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "aggregation-probe", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules:      []rbacv1.PolicyRule{rule},
	})).To(Succeed())
	for _, name := range []string{"view", "edit", "admin"} {
		g.Eventually(func(g Gomega) {
			var role rbacv1.ClusterRole
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, &role)).To(Succeed())
			g.Expect(role.AggregationRule).NotTo(BeNil())
			g.Expect(role.Rules).To(ContainElement(rule))
		}, 30*time.Second, 100*time.Millisecond).Should(Succeed(), "ClusterRole %s aggregates the probe", name)
	}
}

func TestKubeconfigServesKubectl(t *testing.T) {
	g := NewWithT(t)
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	out, err := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", env.Kubeconfig,
		"get", "crd", "helmreleases.helm.toolkit.fluxcd.io", "-o", "name").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(strings.TrimSpace(string(out))).To(Equal("customresourcedefinition.apiextensions.k8s.io/helmreleases.helm.toolkit.fluxcd.io"))

	out, err = exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", env.Kubeconfig, "version", "-o", "json").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring(`"gitVersion": "` + controlplane.KubernetesVersion + `"`))
}
