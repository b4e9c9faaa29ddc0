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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

// aggregationTimeout bounds how long kube-controller-manager's
// clusterrole-aggregation controller takes to fold a role into view, edit
// and admin.
const aggregationTimeout = 30 * time.Second

// caBundleAs reads the TrustAnchor of release as c's user and returns its
// status.caBundle, failing the Gomega g when the read is refused.
func caBundleAs(g Gomega, c client.Client, ns, release string) string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(trustv1.GroupVersion.WithKind(trustv1.TrustAnchorKind))
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, u)).To(Succeed())
	bundle, _, err := unstructured.NestedString(u.Object, "status", "caBundle")
	g.Expect(err).NotTo(HaveOccurred())
	return bundle
}

// expectNoSecretRead checks, with the user's own client and by access
// review, that user reads no Secret of ns.
func expectNoSecretRead(t *testing.T, c client.Client, user, ns string, names ...string) {
	t.Helper()
	g := NewWithT(t)
	for _, name := range names {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "get Secret %s: %v", name, err)
	}
	g.Expect(apierrors.IsForbidden(c.List(context.Background(), &corev1.SecretList{}, client.InNamespace(ns)))).To(BeTrue())
	for _, verb := range []string{"get", "list", "watch"} {
		g.Expect(allowed(t, user, ns, authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets"})).To(BeFalse(), "%s secrets", verb)
	}
}

// A tenant bound to the built-in view role reads its trust anchors and the
// CA certificates in them (the same re-encoded bundle as the projection),
// and no Secret at all: neither the projection nor the source with its key.
func TestViewReadsTrustAnchorsAndTheirCertificatesButNoSecret(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	cert := publishedAnchor(t, ns, "pg")
	bind(t, ns, "viola", "view")
	viola := userClient(t, "viola")

	g.Eventually(func(g Gomega) {
		g.Expect(caBundleAs(g, viola, ns, "pg")).To(Equal(string(cert)))
	}, aggregationTimeout, 200*time.Millisecond).Should(Succeed(), "view reads the TrustAnchor and its certificates")
	var projection corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pg" + trustv1.ProjectionSuffix}, &projection)).To(Succeed())
	g.Expect(caBundleAs(g, viola, ns, "pg")).To(Equal(string(projection.Data[trustv1.ProjectionKey])))

	expectNoSecretRead(t, viola, "viola", ns, "pg"+trustv1.ProjectionSuffix, "pg-ca")
}

// edit and admin get what credo aggregates into them: edit reads what view
// reads, admin also mints, revokes, requests join tokens, writes
// enrollment policies and denies workloads.
func TestEditAndAdminGetCredosAggregatedRoles(t *testing.T) {
	ns := newNamespace(t)
	bind(t, ns, "vic", "view")
	bind(t, ns, "eddie", "edit")
	bind(t, ns, "ada", "admin")
	type grant struct {
		attrs             authorizationv1.ResourceAttributes
		view, edit, admin bool
	}
	ra := func(group, resource, sub, verb string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: group, Resource: resource, Subresource: sub, Verb: verb}
	}
	grants := []grant{
		{ra("trust.credo.dev", "trustanchors", "", "list"), true, true, true},
		{ra("trust.credo.dev", "trustanchors", "", "watch"), true, true, true},
		{ra("access.credo.dev", "accounts", "", "get"), true, true, true},
		{ra("enrollment.credo.dev", "workloads", "", "list"), true, true, true},
		{ra("enrollment.credo.dev", "jointokens", "", "get"), true, true, true},
		{ra("access.credo.dev", "accounts", "mint", "create"), false, false, true},
		{ra("access.credo.dev", "mints", "", "create"), false, false, true},
		{ra("access.credo.dev", "accounts", "revocation", "create"), false, false, true},
		{ra("access.credo.dev", "jointokenrequests", "", "create"), false, false, true},
		{ra("enrollment.credo.dev", "enrollmentpolicies", "", "create"), false, false, true},
		{ra("enrollment.credo.dev", "workloads", "", "delete"), false, false, true},
		// Deny and undeny (spec.denied; the CRD keeps the rest of the spec).
		{ra("enrollment.credo.dev", "workloads", "", "patch"), false, false, true},
		{ra("enrollment.credo.dev", "workloads", "", "update"), false, false, true},
		{ra("enrollment.credo.dev", "workloads", "status", "patch"), false, false, false},
		// Letting the namespace's workloads be looked up (by binding
		// credo-workload-lookup); relabelling them is the platform's.
		{ra("enrollment.credo.dev", "workloads", "", "lookup"), false, false, true},
		{ra("enrollment.credo.dev", "workloads", "", "relabel"), false, false, false},
		// Written by the trust-controller only, for every role.
		{ra("trust.credo.dev", "trustanchors", "", "create"), false, false, false},
		{ra("trust.credo.dev", "trustanchors", "status", "patch"), false, false, false},
	}
	for _, gr := range grants {
		for user, want := range map[string]bool{"vic": gr.view, "eddie": gr.edit, "ada": gr.admin} {
			NewWithT(t).Eventually(func() bool {
				return allowed(t, user, ns, gr.attrs)
			}, aggregationTimeout, 200*time.Millisecond).Should(Equal(want), "%s: %s %s/%s %s/%s", user, gr.attrs.Verb, gr.attrs.Group, gr.attrs.Resource, gr.attrs.Subresource, ns)
		}
	}
	// And for real, as the user: edit lists the anchors.
	NewWithT(t).Eventually(func() error {
		return userClient(t, "eddie").List(context.Background(), &trustv1.TrustAnchorList{}, client.InNamespace(ns))
	}, aggregationTimeout, 200*time.Millisecond).Should(Succeed())
}

// No role credo aggregates into view, edit or admin grants anything on
// Secrets: what a tenant may do with Secrets is the built-in roles' (or
// the platform's) decision alone.
func TestCredosAggregatedRolesGrantNothingOnSecrets(t *testing.T) {
	g := NewWithT(t)
	var aggregated int
	for _, dir := range []string{"config/rbac", "config/apiservice"} {
		objs, err := kustomize(dir)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if o.GetKind() != "ClusterRole" || !aggregatesToTenants(o.GetLabels()) {
				continue
			}
			aggregated++
			var role rbacv1.ClusterRole
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role)).To(Succeed())
			for _, r := range role.Rules {
				g.Expect(r.Resources).NotTo(ContainElement("*"), role.Name)
				g.Expect(r.APIGroups).NotTo(ContainElement("*"), role.Name)
				if slices.Contains(r.APIGroups, "") {
					g.Expect(r.Resources).NotTo(ContainElement("secrets"), role.Name)
				}
			}
		}
	}
	g.Expect(aggregated).To(BeNumerically(">=", 4))
}

func aggregatesToTenants(l map[string]string) bool {
	for k, v := range l {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") && v == "true" {
			return true
		}
	}
	return false
}

// exampleTenantRole is the shipped example of a tenant role that grants
// no Secret access at all.
const exampleTenantRole = "config/rbac/examples/tenant-role.yaml"

// The example tenant role: bound in a namespace, it reads the anchors and
// their certificates, mints and enrolls, and touches no Secret.
func TestTheExampleTenantRoleReadsCertificatesAndNoSecret(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), exampleTenantRole))
	g.Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	g.Expect(yaml.UnmarshalStrict(raw, &role)).To(Succeed())
	g.Expect(aggregatesToTenants(role.Labels)).To(BeFalse(), "the example is bound explicitly, never aggregated")
	role.ResourceVersion = ""
	if err := env.Client.Create(context.Background(), &role); err != nil && !apierrors.IsAlreadyExists(err) {
		g.Expect(err).NotTo(HaveOccurred())
	}

	ns := newNamespace(t)
	cert := publishedAnchor(t, ns, "mongo")
	bind(t, ns, "tess", role.Name)
	tess := userClient(t, "tess")
	g.Eventually(func(g Gomega) {
		g.Expect(caBundleAs(g, tess, ns, "mongo")).To(Equal(string(cert)))
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())
	expectNoSecretRead(t, tess, "tess", ns, "mongo"+trustv1.ProjectionSuffix, "mongo-ca")
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		g.Expect(allowed(t, "tess", ns, authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets"})).To(BeFalse(), "%s secrets", verb)
	}
	g.Expect(allowed(t, "tess", ns, authorizationv1.ResourceAttributes{Group: "access.credo.dev", Resource: "accounts", Subresource: "mint", Verb: "create"})).To(BeTrue())
	g.Expect(allowed(t, "tess", ns, authorizationv1.ResourceAttributes{Group: "access.credo.dev", Resource: "jointokenrequests", Verb: "create"})).To(BeTrue())
	g.Expect(allowed(t, "tess", ns, authorizationv1.ResourceAttributes{Group: "enrollment.credo.dev", Resource: "workloads", Verb: "patch"})).To(BeTrue(), "deny and undeny")
}
