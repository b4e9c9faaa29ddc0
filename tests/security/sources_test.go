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
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// sourceNamesPolicy guards the Secrets the name leg trusts
// (config/admission/sources.yaml).
const sourceNamesPolicy = "credo-trust-source-names"

// nameLegRule creates a TrustSource for the releases of chart in ns alone
// (its namespaceSelector), whose source is secretName, and deletes it at
// the end of the test.
func nameLegRule(t *testing.T, ns, chart, secretName string, writers *trustv1.SourceWriters) *trustv1.TrustSource {
	t.Helper()
	ts := &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{GenerateName: chart + "-"},
		Spec: trustv1.TrustSourceSpec{
			Chart:             chart,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			SecretName:        secretName,
			SourceWriters:     writers,
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	return ts
}

// editTenant is user bound in ns to the built-in edit role, as a platform
// binds a tenant, once kube-apiserver lets it write Secrets there.
func editTenant(t *testing.T, ns, user string) client.Client {
	t.Helper()
	bind(t, ns, user, "edit")
	NewWithT(t).Eventually(func() bool {
		return allowed(t, user, ns, authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "create"})
	}, aggregationTimeout, 200*time.Millisecond).Should(BeTrue(), "edit writes Secrets")
	return userClient(t, user)
}

// serviceAccountWithSecrets is the ServiceAccount name of namespace
// saNamespace, allowed by RBAC to write the Secrets of ns.
func serviceAccountWithSecrets(t *testing.T, ns, saNamespace, name string) client.Client {
	t.Helper()
	user, groups := controlplane.ServiceAccountUser(saNamespace, name)
	grantSecrets(t, ns, saNamespace+"-"+name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: saNamespace})
	return userClient(t, user, groups...)
}

// caSecret is a Secret name in ns holding a fresh CA certificate as ca.crt.
func caSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data:       map[string][]byte{trustv1.DefaultSourceKey: testCA(t, name)},
	}
}

// expectRefusedBySourceNames checks that err is credo-trust-source-names'
// refusal.
func expectRefusedBySourceNames(g Gomega, err error, what string) {
	g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden by %s, got %v", what, sourceNamesPolicy, err)
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '"+sourceNamesPolicy+"'"), what)
}

// Issue 27: a tenant bound to edit cannot plant the Secret a TrustSource
// names for a release (Percona PSMDB's <release>-ca-cert), before the
// operator writes it or after, nor replace the operator's certificate; the
// operator, a ServiceAccount of its own namespace, writes it and its CA is
// projected. Secrets of other names, and the same name in a namespace the
// rule does not apply to, are the tenant's business; metadata and deletion
// stay open.
func TestAnEditTenantCannotForgeANameLegSource(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	nameLegRule(t, ns, "mongodb", "{release}-ca-cert", nil)
	g.Expect(env.Client.Create(ctx, testenv.HelmReleaseObject(ns, "mongo", "mongodb", nil))).To(Succeed())
	tenant := editTenant(t, ns, "eve")

	g.Eventually(func() error {
		return tenant.Create(ctx, caSecret(t, ns, "mongo-ca-cert"), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(HaveOccurred(), "the rule's guard is in force")
	expectRefusedBySourceNames(g, tenant.Create(ctx, caSecret(t, ns, "mongo-ca-cert")), "creating the source of a release before its operator")
	expectRefusedBySourceNames(g, tenant.Create(ctx, caSecret(t, ns, "next-ca-cert")), "creating the source of a release that does not exist yet")

	operator := serviceAccountWithSecrets(t, ns, "psmdb-operator", "percona-server-mongodb-operator")
	source := caSecret(t, ns, "mongo-ca-cert")
	g.Expect(operator.Create(ctx, source)).To(Succeed(), "the operator, a ServiceAccount of its own namespace, writes the source")
	g.Eventually(func(g Gomega) {
		var ta trustv1.TrustAnchor
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mongo"}, &ta)).To(Succeed())
		g.Expect(conditions.IsTrue(&ta, meta.ReadyCondition)).To(BeTrue())
		g.Expect(caBundleAs(g, env.Client, ns, "mongo")).To(Equal(string(source.Data[trustv1.DefaultSourceKey])))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "the operator's CA is projected")

	var src corev1.Secret
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(source), &src)).To(Succeed())
	replaced := src.DeepCopy()
	replaced.Data[trustv1.DefaultSourceKey] = testCA(t, "replaced")
	expectRefusedBySourceNames(g, tenant.Update(ctx, replaced), "replacing the operator's certificate")
	annotated := src.DeepCopy()
	metav1.SetMetaDataAnnotation(&annotated.ObjectMeta, "example.org/note", "harmless")
	annotated.OwnerReferences = nil
	g.Expect(tenant.Update(ctx, annotated)).To(Succeed(), "annotations and owner references (the garbage collector's) stay open")

	for _, name := range []string{"mongo-config", "ca-cert", "mongo-ca-cert-copy"} {
		g.Expect(tenant.Create(ctx, caSecret(t, ns, name))).To(Succeed(), "%s is no name the rule gives a release", name)
	}
	other := newNamespace(t)
	g.Expect(editTenant(t, other, "eve").Create(ctx, caSecret(t, other, "mongo-ca-cert"))).To(Succeed(),
		"the name in a namespace the rule does not apply to")

	g.Expect(tenant.Delete(ctx, &src)).To(Succeed(), "deleting is not restricted")
	expectRefusedBySourceNames(g, tenant.Create(ctx, caSecret(t, ns, "mongo-ca-cert")), "planting the source after deleting the operator's")
	var projection corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mongo" + trustv1.ProjectionSuffix}, &projection)).To(Succeed())
	g.Expect(projection.Data[trustv1.ProjectionKey]).To(Equal(source.Data[trustv1.DefaultSourceKey]), "the operator's CA stays projected")
}

// A rule's spec.sourceWriters replaces the default: the identities it
// names write its sources (here an operator running in the engine's
// namespace, and a group), other ServiceAccounts of other namespaces no
// longer do; the cluster's administrators always do.
func TestSourceWritersNameWhoWritesARulesSources(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	inNamespace, _ := controlplane.ServiceAccountUser(ns, "cnpg-manager")
	nameLegRule(t, ns, "postgres", "{release}-ca", &trustv1.SourceWriters{
		Users:  []string{inNamespace},
		Groups: []string{"platform-operators"},
	})
	tenant := editTenant(t, ns, "eve")
	g.Eventually(func() error {
		return tenant.Create(ctx, caSecret(t, ns, "pg-ca"), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(HaveOccurred(), "the rule's guard is in force")

	create := func(c client.Client) error { return c.Create(ctx, caSecret(t, ns, "pg-ca"), client.DryRunAll) }
	g.Expect(create(serviceAccountWithSecrets(t, ns, ns, "cnpg-manager"))).To(Succeed(), "the user sourceWriters names")
	grantSecrets(t, ns, "platform-operators", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "platform-operators"})
	g.Expect(create(userClient(t, "ops-bot", "platform-operators"))).To(Succeed(), "a member of a group sourceWriters names")
	g.Expect(create(userClient(t, "root", "system:masters"))).To(Succeed(), "the cluster's administrators")

	expectRefusedBySourceNames(g, create(serviceAccountWithSecrets(t, ns, "cnpg-system", "cnpg-manager")),
		"a ServiceAccount of another namespace the rule does not name")
	expectRefusedBySourceNames(g, create(serviceAccountWithSecrets(t, ns, ns, "default")),
		"another ServiceAccount of the Secret's namespace")
	expectRefusedBySourceNames(g, create(tenant), "the tenant")
}

// The guard is the rules': deleting the TrustSource lifts it, and the
// tenant may then create a Secret of that name.
func TestDeletingATrustSourceLiftsItsGuard(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rule := nameLegRule(t, ns, "mongodb", "{release}-ca-cert", nil)
	tenant := editTenant(t, ns, "eve")
	create := func() error { return tenant.Create(ctx, caSecret(t, ns, "mongo-ca-cert"), client.DryRunAll) }
	g.Eventually(create, 20*time.Second, 200*time.Millisecond).Should(HaveOccurred(), "the rule's guard is in force")
	expectRefusedBySourceNames(g, create(), "while the rule exists")

	g.Expect(env.Client.Delete(ctx, rule)).To(Succeed())
	g.Eventually(create, 20*time.Second, 200*time.Millisecond).Should(Succeed(), "the rule's guard goes with it")
}

// The policy's expressions type-check against the TrustSource CRD's schema
// (its paramKind) and the Secret's, as kube-controller-manager's
// validatingadmissionpolicy-status controller checks them (the test
// control plane does not run it): validations, messages and, made
// validations for the check, the matchConditions, which it skips. A
// misspelt field is caught, so the schema was found.
func TestTheSourceNamesPolicyTypeChecksAgainstTheTrustSourceCRD(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: sourceNamesPolicy}, &vap)).To(Succeed())
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	checker := &validating.TypeChecker{SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: dc}, RestMapper: env.Client.RESTMapper()}

	checked := vap.DeepCopy()
	for _, mc := range vap.Spec.MatchConditions {
		checked.Spec.Validations = append(checked.Spec.Validations, admissionregistrationv1.Validation{Expression: mc.Expression})
	}
	g.Expect(checker.Check(checked)).To(BeEmpty())

	misspelt := vap.DeepCopy()
	misspelt.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "params.spec.secretNames == object.metadata.name"}}
	g.Expect(checker.Check(misspelt)).NotTo(BeEmpty(), "the check knows the TrustSource schema")
}
