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

package recovery

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// credoCRDs are the CustomResourceDefinitions config/crd installs.
var credoCRDs = []string{
	"trustanchors.trust.credo.dev", "trustsources.trust.credo.dev",
	"credentialaccounts.credentials.credo.dev", "accountsources.credentials.credo.dev",
	"enrollmentpolicies.enrollment.credo.dev", "jointokens.enrollment.credo.dev", "workloads.enrollment.credo.dev",
}

// docs/guides/uninstall.md, as an operator runs it: the access API's
// APIService first (a registered APIService with no server behind it
// holds every namespace deletion of the cluster), then config/default but
// what carries credo.dev/uninstall=keep: the CRDs (deleting one deletes
// every object of its kind, and with them what they own), the
// credo-system namespace (the platform accounts' kept passwords, the
// enrollment CA) and the admission policies with their parameters (while
// credo is gone, no tenant rewrites what engines and tenants trust). The
// controllers' pods go with their Deployments. What a tenant sees does
// not change: its release's <release>.tenant-ca, its account Secrets, its
// TrustAnchor and CredentialAccounts; the kept passwords and the
// enrollment CA stay. A tenant namespace deleted then goes at once, its
// accounts with it. Installed again, credo finds everything as it left
// it: for a while nothing is written, nothing rotated; the kept password
// of the namespace deleted meanwhile is swept.
func TestUninstallKeepsWhatTenantsSeeAndAReinstallRotatesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	showLogOnFailure(t)
	app := newApplication(t, "un", true)
	// An application whose namespace its tenant deletes while credo is
	// gone: a platform account (kept password) and a tenant account.
	leaving := newApplication(t, "bye", true)

	// The release's CA, published by label: the trust-controller projects
	// it as <release>.tenant-ca.
	ca, err := testpki.NewCA("uninstall test CA")
	g.Expect(err).NotTo(HaveOccurred())
	keys := trustv1.NewContractKeys(embedded.DefaultLabelDomain)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: app.ns, Name: app.release + "-ca", Labels: keys.PublishLabels(app.release)},
		Data:       map[string][]byte{"ca.crt": ca.CertPEM()},
	})).To(Succeed())
	projection := client.ObjectKey{Namespace: app.ns, Name: trustv1.ProjectionName(app.release)}
	anchor := client.ObjectKey{Namespace: app.ns, Name: app.release}
	g.Eventually(func(g Gomega) {
		var s corev1.Secret
		g.Expect(env.Client.Get(ctx, projection, &s)).To(Succeed())
		g.Expect(s.Data["ca.crt"]).To(Equal(ca.CertPEM()))
	}, time.Minute, 200*time.Millisecond).Should(Succeed(), "the trust-controller projects the release's CA")
	accountsReady := func(g Gomega) {
		for _, a := range []*credv1.CredentialAccount{app.platform, app.tenant} {
			var got credv1.CredentialAccount
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(a), &got)).To(Succeed())
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), a.Name)
		}
		var ta trustv1.TrustAnchor
		g.Expect(env.Client.Get(ctx, anchor, &ta)).To(Succeed())
		g.Expect(ta.Status.ObservedGeneration).To(Equal(ta.Generation))
	}
	g.Eventually(accountsReady, time.Minute, 200*time.Millisecond).Should(Succeed())
	// Settled: the controllers have nothing left to write.
	time.Sleep(3 * time.Second)

	var objs []testenv.Kept
	for _, o := range []struct {
		what string
		key  client.ObjectKey
		obj  client.Object
	}{
		{"the tenant's projection", projection, &corev1.Secret{}},
		{"the release's TrustAnchor", anchor, &trustv1.TrustAnchor{}},
		{"the platform account", client.ObjectKeyFromObject(app.platform), &credv1.CredentialAccount{}},
		{"the tenant account", client.ObjectKeyFromObject(app.tenant), &credv1.CredentialAccount{}},
		{"the platform account's Secret", app.platformSecret, &corev1.Secret{}},
		{"the tenant account's Secret", client.ObjectKey{Namespace: app.ns, Name: app.tenant.SecretName()}, &corev1.Secret{}},
		{"the kept platform password", app.keptKey, &corev1.Secret{}},
		{"the enrollment CA", client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: embedded.DefaultSecretName}, &corev1.Secret{}},
		{"credo-system", client.ObjectKey{Name: devenv.PlatformNamespace}, &corev1.Namespace{}},
	} {
		objs = append(objs, testenv.Record(g, env.Client, o.what, o.key, o.obj))
	}
	for _, name := range credoCRDs {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		objs = append(objs, testenv.Record(g, env.Client, "CRD "+name, client.ObjectKey{Name: name}, crd))
	}
	objs = append(objs, testenv.Record(g, env.Client, "the admission parameters", client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: "credo-admission"}, &corev1.ConfigMap{}))
	var bindings admissionv1.ValidatingAdmissionPolicyBindingList
	g.Expect(env.Client.List(ctx, &bindings, client.MatchingLabels{"app.kubernetes.io/part-of": "credo"})).To(Succeed())
	g.Expect(bindings.Items).NotTo(BeEmpty())
	for _, b := range bindings.Items {
		objs = append(objs,
			testenv.Record(g, env.Client, "admission binding "+b.Name, client.ObjectKey{Name: b.Name}, &admissionv1.ValidatingAdmissionPolicyBinding{}),
			testenv.Record(g, env.Client, "admission policy "+b.Spec.PolicyName, client.ObjectKey{Name: b.Spec.PolicyName}, &admissionv1.ValidatingAdmissionPolicy{}))
	}

	// The guide's commands.
	config := filepath.Join(controlplane.RepoRoot(), "config", "default")
	for _, args := range [][]string{
		{"delete", "-k", env.APIServiceManifests(), "--ignore-not-found"},
		{"delete", "-k", config, "-l", "credo.dev/uninstall!=keep", "--ignore-not-found"},
	} {
		out, err := env.Kubectl(ctx, args...)
		g.Expect(err).NotTo(HaveOccurred(), "kubectl %v:\n%s", args, out)
	}
	// The Deployments are gone, and with them the controllers' pods.
	var deploys appsv1.DeploymentList
	g.Expect(env.Client.List(ctx, &deploys, client.InNamespace(devenv.PlatformNamespace))).To(Succeed())
	g.Expect(deploys.Items).To(BeEmpty(), "the uninstall removes the controllers")
	for _, name := range devenv.Controllers {
		g.Expect(env.StopController(name)).To(Succeed())
	}
	t.Cleanup(func() {
		if t.Failed() {
			// The package's next tests need credo installed.
			_ = env.Reinstall(context.Background())
		}
	})

	// The tenant who may write the Secrets of its namespace (as admin and
	// edit grant) finds the kept admission policies in force while credo
	// is gone: it cannot rewrite the platform account's Secret (an engine's
	// superuser verifier, which the credential-controller is not there to
	// repair), nor alter its <release>.tenant-ca or plant another.
	// Deleting an account Secret stays open, as with credo installed: it
	// gives nothing away, and credo recreates it when it is back.
	secrets, err := env.SecretWriter(ctx, app.ns)
	g.Expect(err).NotTo(HaveOccurred())
	refused := func(err error, what string) {
		g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "%s while credo is gone: want Forbidden by an admission policy, got %v", what, err)
		g.ExpectWithOffset(1, err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy"), what)
	}
	var platform, tenantCA corev1.Secret
	g.Eventually(func() error { return secrets.Get(ctx, app.platformSecret, &platform) }, 10*time.Second, 200*time.Millisecond).
		Should(Succeed(), "RBAC lets the tenant read the Secrets of its namespace")
	forged := platform.DeepCopy()
	for k := range forged.Data {
		forged.Data[k] = []byte("forged")
	}
	refused(secrets.Update(ctx, forged), "rewriting the platform account's Secret")
	g.Expect(secrets.Get(ctx, projection, &tenantCA)).To(Succeed())
	other, err := testpki.NewCA("a tenant's own CA")
	g.Expect(err).NotTo(HaveOccurred())
	altered := tenantCA.DeepCopy()
	altered.Data["ca.crt"] = other.CertPEM()
	refused(secrets.Update(ctx, altered), "altering the release's "+projection.Name)
	refused(secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: app.ns, Name: trustv1.ProjectionName("planted")},
		Data:       map[string][]byte{"ca.crt": other.CertPEM()},
	}), "planting another *.tenant-ca")

	// kube-controller-manager's garbage collector and namespace controller
	// act on what went; what a tenant sees stays.
	g.Consistently(func(g Gomega) {
		for _, k := range objs {
			k.Unchanged(g, env.Client)
		}
	}, 15*time.Second, time.Second).Should(Succeed(), "the uninstall keeps what tenants and engines rely on")

	// A tenant namespace deleted while credo is gone goes at once: no
	// APIService is left without a server, and the kept admission
	// policies let the namespace controller and the garbage collector
	// delete its accounts, their Secrets and its release.
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaving.ns}})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: leaving.ns}, &corev1.Namespace{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue(), "a tenant namespace deleted after the uninstall goes")
	g.Expect(keptGone(g, leaving.keptKey)).To(BeFalse(), "nothing sweeps while credo is gone")

	g.Expect(env.Reinstall(ctx)).To(Succeed())
	g.Eventually(func(g Gomega) bool { return keptGone(g, leaving.keptKey) }, time.Minute, 500*time.Millisecond).Should(BeTrue(),
		"installed again, credo sweeps the kept password of the namespace deleted meanwhile")
	g.Eventually(accountsReady, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for _, k := range objs {
			if !strings.Contains(k.What, "Secret") && !strings.Contains(k.What, "password") &&
				!strings.Contains(k.What, "projection") && k.What != "the enrollment CA" {
				// The controllers may note their restart in a status,
				// and the manifests are applied again; what must not
				// change is that they are the same objects.
				k.Same(g, env.Client)
				continue
			}
			k.Unchanged(g, env.Client)
		}
	}, 20*time.Second, time.Second).Should(Succeed(), "installed again, credo rotates nothing and rewrites no Secret")
}
