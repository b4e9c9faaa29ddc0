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

package release

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// credo installed as a user installs it with Flux, from the release: the
// manifests artifact pushed by the release, and config/samples/flux/oci
// applied, its OCIRepository pointed at the loopback registry and its
// spec.verify (the sample's own) given the release's public key. The real
// source-controller verifies the artifact's cosign signature, the real
// kustomize-controller applies config/default and config/apiservice under
// its cluster-reconciler identity (credo's CRDs included: the control plane
// has none before), and both Kustomizations must become Ready through their
// own health checks: the three Deployments, which name the release's image
// by digest, rolled out (runDeployment stands in for kubelet and the
// deployment controller) and the APIService Available, i.e. kube-apiserver
// reached the credential-controller's access API and trusted its
// certificate. The enrollment CA is published as the trust anchor credo
// without any HelmRelease (enrollmentCAPublished).
func testKustomizationFromTheManifestsArtifact(t *testing.T, flux *controlplane.Flux) {
	g := NewWithT(t)
	ctx := context.Background()
	repo := pushed(rel.Manifests.Ref)
	createPublicKeySecret(t, g, "credo-cosign", publicKey(g))

	// credo-access-api is applied once the CA it patches in is known; it
	// dependsOn credo, which would hold it back until then anyway.
	start := time.Now()
	for _, o := range renderInstall(t, g, repo, nil) {
		if o.GetName() != "credo-access-api" {
			applyObject(g, o)
		}
	}
	t.Cleanup(uninstall)

	var deploys appsv1.DeploymentList
	g.Eventually(func() []appsv1.Deployment {
		g.Expect(env.Client.List(ctx, &deploys, client.InNamespace("credo-system"),
			client.MatchingLabels{"app.kubernetes.io/part-of": "credo"})).To(Succeed())
		return deploys.Items
	}, 2*time.Minute, time.Second).Should(HaveLen(3), "kustomize-controller applies config/default's Deployments")
	sourceVerified(g, "credo")
	for _, d := range deploys.Items {
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(publish.ImageName+"@"+rel.Image.Digest.String()),
			"the release pins %s's image by digest", d.Name)
	}
	access := accessAPI{Dir: filepath.Join(env.Dir, "access-api-flux")}
	access.Port = testenv.FreePort(t)
	for i := range deploys.Items {
		d := &deploys.Items[i]
		var extra []string
		if d.Name == "credential-controller" {
			extra = access.Flags()
		}
		p, err := runDeployment(ctx, d, flux.EventsURL, extra...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
	}
	waitForKustomization(g, "credo", 3*time.Minute)
	t.Logf("Kustomization credo Ready %s after it was applied", time.Since(start).Round(time.Second))
	enrollmentCAPublished(g)

	// The APIService's caBundle is the credential-controller's to keep, as
	// config/apiservice documents: nothing patches it in.
	start = time.Now()
	for _, o := range renderInstall(t, g, repo, &access) {
		if o.GetName() == "credo-access-api" {
			applyObject(g, o)
		}
	}
	waitForKustomization(g, "credo-access-api", 2*time.Minute)
	t.Logf("Kustomization credo-access-api Ready %s after it was applied", time.Since(start).Round(time.Second))

	// Applied again, as kustomize-controller does on every interval, the
	// manifests take nothing back: the APIService keeps its caBundle and
	// stays Available.
	handled := requestReconcile(g, "credo-access-api")
	g.Consistently(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: accessapi.APIServiceName}, u)).To(Succeed())
		var as apiregistrationv1.APIService
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &as)).To(Succeed())
		g.Expect(as.Spec.CABundle).NotTo(BeEmpty(), "the re-apply took the caBundle back")
		g.Expect(apiServiceAvailable(&as)).To(BeTrue())
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(handled, time.Minute, 200*time.Millisecond).Should(BeTrue(), "credo-access-api handles the reconcile request")
	waitForKustomization(g, "credo-access-api", time.Minute)

	// Deleting the Kustomizations uninstalls credo (docs/guides/uninstall.md):
	// kustomize-controller deletes what they applied but what is annotated
	// kustomize.toolkit.fluxcd.io/prune: disabled, so the CRDs with every
	// TrustAnchor, credo-system with the enrollment CA, and the admission
	// policies stay.
	before := keptUIDs(g)
	g.Expect(before).To(HaveKey("TrustAnchor credo-system/credo"))
	uninstall()
	g.Eventually(func() []appsv1.Deployment {
		g.Expect(env.Client.List(ctx, &deploys, client.InNamespace("credo-system"),
			client.MatchingLabels{"app.kubernetes.io/part-of": "credo"})).To(Succeed())
		return deploys.Items
	}, time.Minute, time.Second).Should(BeEmpty(), "deleting the Kustomization removes the controllers")
	err := env.Client.Get(ctx, client.ObjectKey{Name: accessapi.APIServiceName}, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiregistrationv1.SchemeGroupVersion.String(), "kind": "APIService"}})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "deleting credo-access-api removes the APIService: %v", err)
	g.Expect(keptUIDs(g)).To(Equal(before), "what the uninstall keeps stays, the same objects")
}

// keptUIDs returns the UID of each object an uninstall keeps, by kind and
// name: credo's seven CRDs, credo-system, the admission policies, their
// bindings and parameters, the enrollment CA and its TrustAnchor.
func keptUIDs(g Gomega) map[string]types.UID {
	ctx := context.Background()
	uids := map[string]types.UID{}
	var crds metav1.PartialObjectMetadataList
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	g.Expect(env.Client.List(ctx, &crds, client.MatchingLabels{"credo.dev/uninstall": "keep"})).To(Succeed())
	g.Expect(crds.Items).To(HaveLen(7), "credo's CRDs")
	for _, c := range crds.Items {
		uids["CRD "+c.Name] = c.UID
	}
	var policies admissionv1.ValidatingAdmissionPolicyList
	g.Expect(env.Client.List(ctx, &policies, client.MatchingLabels{"credo.dev/uninstall": "keep"})).To(Succeed())
	var bindings admissionv1.ValidatingAdmissionPolicyBindingList
	g.Expect(env.Client.List(ctx, &bindings, client.MatchingLabels{"credo.dev/uninstall": "keep"})).To(Succeed())
	g.Expect(policies.Items).NotTo(BeEmpty())
	g.Expect(bindings.Items).To(HaveLen(len(policies.Items)), "a binding per policy")
	for _, p := range policies.Items {
		uids["ValidatingAdmissionPolicy "+p.Name] = p.UID
	}
	for _, b := range bindings.Items {
		uids["ValidatingAdmissionPolicyBinding "+b.Name] = b.UID
	}
	for key, obj := range map[string]client.Object{
		"Namespace credo-system":                  &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}},
		"ConfigMap credo-system/credo-admission":  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "credo-system", Name: "credo-admission"}},
		"Secret credo-system/credo-enrollment-ca": &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "credo-system", Name: "credo-enrollment-ca"}},
		"TrustAnchor credo-system/credo":          &trustv1.TrustAnchor{ObjectMeta: metav1.ObjectMeta{Namespace: "credo-system", Name: "credo"}},
	} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed(), key)
		uids[key] = obj.GetUID()
	}
	return uids
}

// requestReconcile asks kustomize-controller to reconcile the Kustomization
// flux-system/name now, as `flux reconcile kustomization` does; handled
// reports whether it has handled the request.
func requestReconcile(g Gomega, name string) (handled func() bool) {
	ctx := context.Background()
	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind))
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: name}, u)).To(Succeed())
	patch := client.MergeFrom(u.DeepCopy())
	u.SetAnnotations(map[string]string{meta.ReconcileRequestAnnotation: token})
	g.Expect(env.Client.Patch(ctx, u, patch)).To(Succeed())
	return func() bool {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)
		v, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
		return v == token
	}
}

func apiServiceAvailable(as *apiregistrationv1.APIService) bool {
	for _, c := range as.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

// renderInstall builds config/samples/flux/oci through a test overlay: the
// OCIRepository points at repo (insecure: plain HTTP on loopback), its
// verification as the sample has it, and, when
// access is given, the credo-access-api Kustomization patches what it
// applies so that kube-apiserver reaches the access API on loopback (an
// ExternalName Service 'localhost' on its port, as tests/devenv does). The
// shipped sample is not changed.
func renderInstall(t *testing.T, g Gomega, repo string, access *accessAPI) []*unstructured.Unstructured {
	// The sample's spec.verify stays as shipped.
	patches := []patch{{Target: target{Kind: "OCIRepository", Name: "credo"}, Patch: ops(g,
		op("replace", "/spec/url", repo),
		op("replace", "/spec/ref/tag", installTag),
		op("add", "/spec/insecure", true))}}
	if access != nil {
		patches = append(patches, patch{Target: target{Kind: "Kustomization", Name: "credo-access-api"},
			Patch: ops(g, op("add", "/spec/patches", access.Patches(g)))})
	}
	return renderSample(t, g, "oci", patches)
}

func applyObject(g Gomega, o *unstructured.Unstructured) {
	g.Expect(env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o),
		client.FieldOwner("credo-tests"), client.ForceOwnership)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
}

// waitForKustomization waits until the Flux Kustomization flux-system/name
// is Ready=True for the revision of installTag.
func waitForKustomization(g Gomega, name string, timeout time.Duration) {
	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind))
		g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: "flux-system", Name: name}, u)).To(Succeed())
		var ks kustomizev1.Kustomization
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ks)).To(Succeed())
		ready := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
		g.Expect(ready).NotTo(BeNil(), "no Ready condition yet")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
		g.Expect(ks.Status.LastAppliedRevision).To(HavePrefix(installTag + "@sha256:"))
	}, timeout, time.Second).Should(Succeed(), "Kustomization %s", name)
}

// uninstall deletes the Flux objects while kustomize-controller still runs:
// credo-access-api prunes the APIService and its Service (the other tests
// create their own); credo prunes config/default but what is kept
// (docs/guides/uninstall.md).
func uninstall() {
	ctx := context.Background()
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind), "credo-access-api"},
		{kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind), "credo"},
		{sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind), "credo"},
	} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		u.SetNamespace("flux-system")
		u.SetName(o.name)
		_ = env.Client.Delete(ctx, u)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && env.Client.Get(ctx, client.ObjectKeyFromObject(u), u) == nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
}
