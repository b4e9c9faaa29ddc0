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
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// helmNamespace is where the chart is installed: not credo-system, so that
// the chart's namespace handling is what puts everything in place.
const helmNamespace = "credo-helm"

// credo installed as a platform installs its system components: the
// release's Helm chart from its OCI repository, config/samples/flux/helm
// applied with the OCIRepository pointed at the loopback registry (its
// layerSelector and spec.verify as shipped) and the HelmRelease's
// namespaces set to credo-helm. The real source-controller verifies the
// chart's signature, the real helm-controller installs it (creating the
// namespace, credo's CRDs included) and waits for the Deployments, which
// name the release's image by digest; the release becomes Ready and the
// APIService Available. Deleting the HelmRelease uninstalls the chart and
// keeps the CRDs, as charts/credo documents.
func testHelmReleaseFromTheOCIChart(t *testing.T, flux *controlplane.Flux) {
	g := NewWithT(t)
	ctx := context.Background()
	createPublicKeySecret(t, g, "credo-cosign", publicKey(g))
	access := accessAPI{Dir: filepath.Join(env.Dir, "access-api-helm"), Port: testenv.FreePort(t)}

	objs := renderSample(t, g, "helm", []patch{
		{Target: target{Kind: "OCIRepository", Name: "credo-chart"}, Patch: ops(g,
			op("replace", "/spec/url", pushed(rel.Chart.Ref)),
			op("replace", "/spec/ref/tag", installTag[1:]),
			op("add", "/spec/insecure", true))},
		{Target: target{Kind: "HelmRelease", Name: "credo"}, Patch: ops(g,
			op("replace", "/spec/targetNamespace", helmNamespace),
			op("replace", "/spec/storageNamespace", helmNamespace),
			op("add", "/spec/postRenderers", []any{map[string]any{"kustomize": map[string]any{"patches": access.Patches(g)}}}))},
	})
	g.Expect(objs).To(HaveLen(2))
	start := time.Now()
	for _, o := range objs {
		applyObject(g, o)
	}
	hr := types.NamespacedName{Namespace: "flux-system", Name: "credo"}
	t.Cleanup(func() { uninstallHelmRelease(hr); deleteOCIRepository("credo-chart") })

	var deploys appsv1.DeploymentList
	g.Eventually(func() []appsv1.Deployment {
		g.Expect(env.Client.List(ctx, &deploys, client.InNamespace(helmNamespace),
			client.MatchingLabels{"app.kubernetes.io/part-of": "credo"})).To(Succeed())
		return deploys.Items
	}, 3*time.Minute, time.Second).Should(HaveLen(3), "helm-controller installs the chart's Deployments")
	sourceVerified(g, "credo-chart")
	for i := range deploys.Items {
		d := &deploys.Items[i]
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(publish.ImageName+"@"+rel.Image.Digest.String()),
			"the chart pins %s's image by digest", d.Name)
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

	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind))
		g.Expect(env.Client.Get(ctx, hr, u)).To(Succeed())
		var release helmv2.HelmRelease
		g.Expect(runtimeConvert(u, &release)).To(Succeed())
		ready := apimeta.FindStatusCondition(release.Status.Conditions, meta.ReadyCondition)
		g.Expect(ready).NotTo(BeNil(), "no Ready condition yet")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
		g.Expect(release.Status.History.Latest()).NotTo(BeNil())
		// helm-controller appends the OCI digest as build metadata.
		g.Expect(release.Status.History.Latest().ChartVersion).To(HavePrefix(installTag[1:] + "+"))
	}, 5*time.Minute, time.Second).Should(Succeed(), "HelmRelease credo Ready")
	t.Logf("HelmRelease credo Ready %s after it was applied", time.Since(start).Round(time.Second))

	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: accessapi.APIServiceName}, u)).To(Succeed())
		var as apiregistrationv1.APIService
		g.Expect(runtimeConvert(u, &as)).To(Succeed())
		g.Expect(as.Spec.Service.Namespace).To(Equal(helmNamespace))
		g.Expect(apiServiceAvailable(&as)).To(BeTrue(), "%+v", as.Status.Conditions)
	}, 2*time.Minute, time.Second).Should(Succeed(), "the chart's APIService is Available")

	uninstallHelmRelease(hr)
	g.Eventually(func() []appsv1.Deployment {
		g.Expect(env.Client.List(ctx, &deploys, client.InNamespace(helmNamespace))).To(Succeed())
		return deploys.Items
	}, time.Minute, time.Second).Should(BeEmpty(), "uninstalling the chart removes the Deployments")
	var crd metav1.PartialObjectMetadata
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "trustanchors.trust.credo.dev"}, &crd)).To(Succeed(),
		"uninstalling the chart keeps the CRDs (and every TrustAnchor)")
	g.Expect(crd.DeletionTimestamp).To(BeNil())
}

// uninstallHelmRelease deletes the HelmRelease and waits until
// helm-controller has uninstalled it and removed its finalizer.
func uninstallHelmRelease(key types.NamespacedName) {
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind))
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	_ = env.Client.Delete(ctx, u)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && env.Client.Get(ctx, key, u) == nil {
		time.Sleep(200 * time.Millisecond)
	}
}
