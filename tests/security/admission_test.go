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
	"fmt"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/controlplane"
)

var (
	policyOnce sync.Once
	policyErr  error
)

// admissionPolicy applies the admission policies, their bindings and
// their default parameters as config/default (the default install) carries
// them, once, and waits until kube-apiserver enforces them: until a
// tenant's dry-run of a forged source is refused.
func admissionPolicy(t *testing.T) {
	t.Helper()
	policyOnce.Do(func() {
		ctx := context.Background()
		objs, err := kustomize("config/default")
		if policyErr = err; err != nil {
			return
		}
		policies := map[string]bool{}
		for _, o := range objs {
			switch {
			case o.GetKind() == "ValidatingAdmissionPolicy":
				policies[o.GetName()] = true
			case o.GetKind() == "ValidatingAdmissionPolicyBinding", o.GetKind() == "ConfigMap" && o.GetName() == "credo-admission":
			default:
				continue
			}
			if policyErr = apply(ctx, o); policyErr != nil {
				return
			}
		}
		for _, p := range defaultPolicies {
			if !policies[p] {
				policyErr = fmt.Errorf("config/default carries no admission policy %s", p)
			}
		}
	})
	g := NewWithT(t)
	g.Expect(policyErr).NotTo(HaveOccurred())
	ns := newNamespace(t)
	tenant := secretWriter(t, ns, "probe")
	g.Eventually(func() error {
		return tenant.Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns, Labels: keys.PublishLabels("probe")},
		}, client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")
}

// defaultPolicies are the admission policies every install has.
var defaultPolicies = []string{"credo-trust-sources", "credo-account-secrets", "credo-platform-accounts", "credo-platform-releases", "credo-workload-denials", "credo-workload-attributes", "credo-trust-source-names", "credo-tenant-projection-sources"}

// expectRefused checks that err is the admission policy's refusal.
func expectRefused(g Gomega, err error, what string) {
	g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden by the admission policy, got %v", what, err)
	g.ExpectWithOffset(1, err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy"), what)
}

// A principal who may write Secrets, but is not named as a publisher,
// cannot publish a CA on the label leg: not for a release whose real CA
// does not exist yet, not by labelling an existing Secret, and it cannot
// change or withdraw a source an operator published.
func TestTenantCannotForgeOrWithdrawALabelLegSource(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newRelease(t, ns, "pg")
	tenant := secretWriter(t, ns, "mallory")

	forged := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "forged-ca", Namespace: ns, Labels: keys.PublishLabels("pg")},
		Data:       map[string][]byte{"ca.crt": testCA(t, "forged")},
	}
	expectRefused(g, tenant.Create(ctx, forged), "creating a labelled Secret")
	forged.Labels = map[string]string{keys.Release: "pg"}
	expectRefused(g, tenant.Create(ctx, forged), "creating a Secret with the release label alone")

	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}, Data: map[string][]byte{"ca.crt": testCA(t, "plain")}}
	g.Expect(tenant.Create(ctx, plain)).To(Succeed(), "Secrets without the labels are the tenant's business")
	labelled := plain.DeepCopy()
	labelled.Labels = keys.PublishLabels("pg")
	expectRefused(g, tenant.Update(ctx, labelled), "labelling an existing Secret")

	// The operator's source: the tenant may neither replace its certificate
	// nor withdraw it, but may touch what the trust-controller ignores.
	cert := publishedAnchor(t, ns, "mongo")
	var src corev1.Secret
	g.Expect(tenant.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mongo-ca"}, &src)).To(Succeed())
	replaced := src.DeepCopy()
	replaced.Data["ca.crt"] = testCA(t, "replaced")
	expectRefused(g, tenant.Update(ctx, replaced), "replacing the certificate of a published source")
	withdrawn := src.DeepCopy()
	delete(withdrawn.Labels, keys.PublishCACert)
	expectRefused(g, tenant.Update(ctx, withdrawn), "withdrawing a published source")
	rekeyed := src.DeepCopy()
	metav1.SetMetaDataAnnotation(&rekeyed.ObjectMeta, keys.Key, "tls.crt")
	expectRefused(g, tenant.Update(ctx, rekeyed), "changing the key a published source lifts")
	second := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "mongo-second-ca", Namespace: ns, Labels: keys.PublishLabels("mongo")},
		Data:       map[string][]byte{"ca.crt": testCA(t, "second")},
	}
	expectRefused(g, tenant.Create(ctx, second), "a second claim on a published release, which would freeze it in AmbiguousSource")
	annotated := src.DeepCopy()
	metav1.SetMetaDataAnnotation(&annotated.ObjectMeta, "example.org/note", "harmless")
	g.Expect(tenant.Update(ctx, annotated)).To(Succeed(), "metadata the trust-controller ignores stays writable")

	var ta trustv1.TrustAnchor
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg"}, &ta)).To(Satisfy(apierrors.IsNotFound), "no anchor from the forgery")
	g.Expect(caBundleAs(g, env.Client, ns, "mongo")).To(Equal(string(cert)))
}

// The identities the platform names (here cert-manager's ServiceAccount,
// in the default parameters) publish; so does the enrollment-controller's
// ServiceAccount (the enrollment CA, in its own namespace: the only one
// where it may write a Secret).
func TestNamedIdentitiesPublish(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	publishedAnchor(t, ns, "redis")
	g.Expect(userClient(t, enrollmentControllerUser, enrollmentControllerGroups...).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "enrollment-ca", Namespace: platformNamespace, Labels: keys.PublishLabels("credo")},
		Data:       map[string][]byte{"ca.crt": testCA(t, "enrollment")},
	}, client.DryRunAll)).To(Succeed())
}

// Only credo's trust-controller writes Secrets named <release>.tenant-ca
// or labelled <domain>/tenant-ca: a tenant cannot plant one, even under
// the trust-controller's field manager, nor alter the real one. The
// trust-controller, running as its ServiceAccount, projects as before.
func TestOnlyTheTrustControllerWritesTenantCASecrets(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := secretWriter(t, ns, "trudy")
	planted := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Data:       map[string][]byte{trustv1.ProjectionKey: testCA(t, "planted")},
		}
	}
	expectRefused(g, tenant.Create(ctx, planted("db"+trustv1.ProjectionSuffix, nil)), "creating db.tenant-ca")
	expectRefused(g, tenant.Create(ctx, planted("db"+trustv1.ProjectionSuffix, nil), client.FieldOwner(trust.TrustAnchorFieldOwner)),
		"creating db.tenant-ca under the trust-controller's field manager")
	expectRefused(g, tenant.Create(ctx, planted("lookalike", map[string]string{keys.TenantCA: "true"})), "creating a Secret labelled tenant-ca")

	cert := publishedAnchor(t, ns, "kafka")
	var projection corev1.Secret
	g.Expect(tenant.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kafka" + trustv1.ProjectionSuffix}, &projection)).To(Succeed())
	g.Expect(projection.Data[trustv1.ProjectionKey]).To(Equal(cert), "projected by the trust-controller under the policy")
	altered := projection.DeepCopy()
	altered.Data[trustv1.ProjectionKey] = testCA(t, "altered")
	expectRefused(g, tenant.Update(ctx, altered), "altering the projection")

	g.Expect(userClient(t, trustControllerUser, trustControllerGroups...).Create(ctx,
		planted("other"+trustv1.ProjectionSuffix, map[string]string{keys.TenantCA: "true"}), client.DryRunAll)).To(Succeed(),
		"the trust-controller's ServiceAccount is admitted")
}

// The policy leaves owner references open, so that the garbage collector
// can orphan a projection (an update of a *.tenant-ca Secret by
// kube-controller-manager, which is named nowhere); whoever removes the
// reference from a live release's projection sees the trust-controller
// write it back.
func TestOwnerReferencesOfAProjectionStayOpenToTheGarbageCollector(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := secretWriter(t, ns, "oscar")
	publishedAnchor(t, ns, "nats")
	key := client.ObjectKey{Namespace: ns, Name: "nats" + trustv1.ProjectionSuffix}
	var projection corev1.Secret
	g.Expect(tenant.Get(ctx, key, &projection)).To(Succeed())
	g.Expect(projection.OwnerReferences).To(HaveLen(1))
	orphaned := projection.DeepCopy()
	orphaned.OwnerReferences = nil
	g.Expect(tenant.Update(ctx, orphaned)).To(Succeed(), "what the garbage collector does when a release is deleted with the orphan policy")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, &projection)).To(Succeed())
		g.Expect(projection.OwnerReferences).To(HaveLen(1))
		g.Expect(projection.OwnerReferences[0].Kind).To(Equal(helmv2.HelmReleaseKind))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "the trust-controller writes the owner back")
}

// The platform names more publishers in the parameter ConfigMap: a list
// entry may carry spaces around it, and the change takes effect without
// touching the policy.
func TestPublishersAreExtendedThroughTheParameters(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	user, groups := controlplane.ServiceAccountUser("strimzi", "strimzi-cluster-operator")
	grantSecrets(t, ns, "strimzi", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "strimzi-cluster-operator", Namespace: "strimzi"})
	strimzi := userClient(t, user, groups...)
	publish := func() error {
		return strimzi.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "kafka-cluster-ca-cert", Namespace: ns, Labels: keys.PublishLabels("kafka")},
			Data:       map[string][]byte{"ca.crt": testCA(t, "kafka")},
		}, client.DryRunAll)
	}
	expectRefused(g, publish(), "an operator the parameters do not name")

	var params corev1.ConfigMap
	key := client.ObjectKey{Namespace: platformNamespace, Name: "credo-admission"}
	g.Expect(env.Client.Get(ctx, key, &params)).To(Succeed())
	before := params.Data["publisherGroups"]
	t.Cleanup(func() {
		g.Expect(env.Client.Get(ctx, key, &params)).To(Succeed())
		params.Data["publisherGroups"] = before
		g.Expect(env.Client.Update(ctx, &params)).To(Succeed())
	})
	params.Data["publisherGroups"] = before + ", system:serviceaccounts:strimzi"
	g.Expect(env.Client.Update(ctx, &params)).To(Succeed())
	g.Eventually(publish, 20*time.Second, 200*time.Millisecond).Should(Succeed())
}
