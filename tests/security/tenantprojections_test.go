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

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/tenantprojection"
	"github.com/credo-dev/credo/tests/platform"
)

// sentinelSourcesPolicy guards the Secrets the platform's TenantProjections
// name (config/admission/tenantprojections.yaml).
const sentinelSourcesPolicy = "credo-tenant-projection-sources"

// platformSentinel creates a TenantProjection in ns, as the platform's
// chart renders it, naming source as the CA of release.
func platformSentinel(t *testing.T, ns, release, source string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), platform.Sentinel(ns, release, source))).To(Succeed())
}

func expectRefusedBySentinelSources(g Gomega, err error, what string) {
	g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden by %s, got %v", what, sentinelSourcesPolicy, err)
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '"+sentinelSourcesPolicy+"'"), what)
}

// Issue 33: the platform's TenantProjection names CloudNativePG's
// key-bearing <release>-ca as the release's CA. A tenant bound to edit
// (who writes Secrets, as admin does), or a ServiceAccount of the tenant's
// own namespace, cannot plant that Secret before the operator writes it,
// nor replace the operator's certificate: its CA would be projected to the
// tenant by credo (--tenant-projections=credo) or by the platform's own
// controller. The operator, a ServiceAccount of its own namespace, writes
// it; other names, and metadata, stay the tenant's.
func TestATenantCannotForgeTheSourceATenantProjectionNames(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	platformSentinel(t, ns, "postgres-main", "postgres-main-ca")
	tenant := editTenant(t, ns, "mallory")
	own := serviceAccountWithSecrets(t, ns, ns, "app")

	g.Eventually(func() error {
		return tenant.Create(ctx, caSecret(t, ns, "postgres-main-ca"), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(HaveOccurred(), "the sentinel's guard is in force")
	expectRefusedBySentinelSources(g, tenant.Create(ctx, caSecret(t, ns, "postgres-main-ca")), "a tenant planting the source before the operator")
	expectRefusedBySentinelSources(g, own.Create(ctx, caSecret(t, ns, "postgres-main-ca")), "a ServiceAccount of the tenant's namespace planting it")

	operator := serviceAccountWithSecrets(t, ns, "cnpg-system", "cnpg-manager")
	source := caSecret(t, ns, "postgres-main-ca")
	g.Expect(operator.Create(ctx, source)).To(Succeed(), "the operator, a ServiceAccount of its own namespace, writes the source")

	var src = source.DeepCopy()
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(source), src)).To(Succeed())
	replaced := src.DeepCopy()
	replaced.Data[trustv1.DefaultSourceKey] = testCA(t, "replaced")
	expectRefusedBySentinelSources(g, tenant.Update(ctx, replaced), "replacing the operator's certificate")
	annotated := src.DeepCopy()
	metav1.SetMetaDataAnnotation(&annotated.ObjectMeta, "example.org/note", "harmless")
	g.Expect(tenant.Update(ctx, annotated)).To(Succeed(), "metadata stays open")
	g.Expect(tenant.Create(ctx, caSecret(t, ns, "postgres-main-app"))).To(Succeed(), "a name no sentinel gives")

	// Nor can it pass a Secret of its own off as the platform's projection
	// (owner-referenced to the sentinel), which credo would record and the
	// platform's controller take for its own (credo-trust-sources).
	var sentinel = tenantprojection.New()
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main-ca"}, sentinel)).To(Succeed())
	forged := caSecret(t, ns, "postgres-main"+trustv1.ProjectionSuffix)
	forged.OwnerReferences = []metav1.OwnerReference{tenantprojection.Decode(sentinel).OwnerReference()}
	err := tenant.Create(ctx, forged)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a forged platform projection: want Forbidden, got %v", err)
	other := newNamespace(t)
	g.Expect(editTenant(t, other, "mallory").Create(ctx, caSecret(t, other, "postgres-main-ca"))).To(Succeed(),
		"the name in a namespace without the sentinel")
}

// The policy's expressions type-check against the TenantProjection CRD's
// schema (its paramKind, the stand-in of config/testdata/crds) and the
// Secret's; a misspelt field is caught.
func TestTheSentinelSourcesPolicyTypeChecksAgainstTheTenantProjectionCRD(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: sentinelSourcesPolicy}, &vap)).To(Succeed())
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	checker := &validating.TypeChecker{SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: dc}, RestMapper: env.Client.RESTMapper()}
	checked := vap.DeepCopy()
	for _, mc := range vap.Spec.MatchConditions {
		checked.Spec.Validations = append(checked.Spec.Validations, admissionregistrationv1.Validation{Expression: mc.Expression})
	}
	g.Expect(checker.Check(checked)).To(BeEmpty())
	misspelt := vap.DeepCopy()
	misspelt.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "params.spec.projections.exists(p, p.sourceName == object.metadata.name)"}}
	g.Expect(checker.Check(misspelt)).NotTo(BeEmpty(), "the check knows the TenantProjection schema")
}
