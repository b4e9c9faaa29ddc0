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

package testenv

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Tenant returns a client of a tenant of ns: a user bound in ns to a Role
// granting what Flux's flux-edit role (aggregated into the built-in admin
// and edit) grants on HelmReleases and sources, every verb, and nothing
// else. What it writes there (labels, chart, chartRef, values, names) is
// the tenant's choice, as in a platform that grants it.
func (e *Env) Tenant(t testing.TB, ns string) client.Client {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	user := "tenant@" + ns
	g.Expect(e.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-edit", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: []string{"*"}},
			{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		},
	})).To(Succeed())
	g.Expect(e.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-edit", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "flux-edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
	c, err := e.UserClient(user, nil)
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// TenantRelease is a HelmRelease a tenant writes: its chart is ref (a
// source of its own namespace without a namespace, or a cross-namespace
// reference), with its labels and values (JSON, none when empty).
func TenantRelease(ns, name string, ref helmv2.CrossNamespaceSourceReference, labels map[string]string, values string) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour}, ChartRef: &ref},
	}
	if values != "" {
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
	}
	return hr
}
