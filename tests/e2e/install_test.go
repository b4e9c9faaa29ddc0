//go:build e2e

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

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
	"github.com/credo-dev/credo/tests/testenv"
)

// shipped renders what a user installs: config/default and config/apiservice.
func shipped(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, dir := range []string{"config/default", "config/apiservice"} {
		o, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), dir))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	return objs
}

// The controllers' identities are bound by the roles and bindings
// config/default and config/apiservice ship, and by nothing else: every
// binding naming one of their ServiceAccounts is a shipped one, with the
// shipped roleRef and subjects, and every role it grants that credo ships
// holds the shipped rules.
func TestControllersAreBoundOnlyByTheShippedManifests(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	want := map[string]*unstructured.Unstructured{}
	for _, o := range shipped(t) {
		want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o
	}
	isController := func(s rbacv1.Subject) bool {
		return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == devenv.PlatformNamespace &&
			slices.ContainsFunc(devenv.Controllers, func(c string) bool { return devenv.ServiceAccount(c) == s.Name })
	}
	type binding struct {
		key      string
		roleRef  rbacv1.RoleRef
		subjects []rbacv1.Subject
	}
	var bindings []binding
	var crbs rbacv1.ClusterRoleBindingList
	g.Expect(k8s.List(ctx, &crbs)).To(Succeed())
	for _, b := range crbs.Items {
		bindings = append(bindings, binding{"ClusterRoleBinding//" + b.Name, b.RoleRef, b.Subjects})
	}
	var rbs rbacv1.RoleBindingList
	g.Expect(k8s.List(ctx, &rbs)).To(Succeed())
	for _, b := range rbs.Items {
		bindings = append(bindings, binding{"RoleBinding/" + b.Namespace + "/" + b.Name, b.RoleRef, b.Subjects})
	}
	granted := 0
	for _, b := range bindings {
		if !slices.ContainsFunc(b.subjects, isController) {
			continue
		}
		granted++
		obj, ok := want[b.key]
		if !ok {
			t.Errorf("%s binds a controller's ServiceAccount but is not in config/default or config/apiservice", b.key)
			continue
		}
		var s struct {
			RoleRef  rbacv1.RoleRef   `json:"roleRef"`
			Subjects []rbacv1.Subject `json:"subjects"`
		}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &s)).To(Succeed())
		g.Expect(b.roleRef).To(Equal(s.RoleRef), b.key)
		g.Expect(b.subjects).To(ConsistOf(s.Subjects), b.key)

		roleKind, roleNS := "ClusterRole", ""
		if b.roleRef.Kind == "Role" {
			roleKind, roleNS = "Role", obj.GetNamespace()
		}
		role, ok := want[roleKind+"/"+roleNS+"/"+b.roleRef.Name]
		if !ok {
			continue // a built-in role (system:auth-delegator, extension-apiserver-authentication-reader)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(role.GroupVersionKind())
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(role), live)).To(Succeed())
		g.Expect(live.Object["rules"]).To(Equal(role.Object["rules"]), "%s %s", roleKind, b.roleRef.Name)
	}
	g.Expect(granted).To(BeNumerically(">=", len(devenv.Controllers)), "every controller's ServiceAccount is bound")
}
