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

package upgrade

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/fluxinstall"
)

// install is credo installed through Flux with the working tree's
// config/samples/flux/oci: the same objects for every release, only the
// OCIRepository's tag differs, as an operator upgrades by changing it.
// Its controllers run as processes (fluxinstall.RunDeployment); procs
// holds the running one of each Deployment.
type install struct {
	flux   *controlplane.Flux
	access fluxinstall.AccessAPI
	// enrollAddr is the enrollment listener's loopback address, the same
	// for every version, as a Service's would be.
	enrollAddr string
	procs      map[string]*controlplane.Process
}

// render builds the sample through a test overlay: the OCIRepository at the
// loopback registry with tag (its spec.verify as shipped), and the access
// API reached on loopback.
func (in *install) render(t *testing.T, g Gomega, tag string) []*unstructured.Unstructured {
	return fluxinstall.RenderSample(g, t.TempDir(), filepath.Join(controlplane.RepoRoot(), "config", "samples", "flux", "oci"),
		[]fluxinstall.Patch{
			{Target: fluxinstall.Target{Kind: "OCIRepository", Name: "credo"}, Patch: fluxinstall.Ops(g,
				fluxinstall.Op("replace", "/spec/url", manifestsRepo()),
				fluxinstall.Op("replace", "/spec/ref/tag", tag),
				fluxinstall.Op("add", "/spec/insecure", true))},
			{Target: fluxinstall.Target{Kind: "Kustomization", Name: "credo-access-api"},
				Patch: fluxinstall.Ops(g, fluxinstall.Op("add", "/spec/patches", in.access.Patches(g)))},
		})
}

// apply applies the rendered sample, as a user's `kubectl apply` or Flux's
// own bootstrap does.
func (in *install) apply(t *testing.T, g Gomega, tag string) {
	for _, o := range in.render(t, g, tag) {
		g.Expect(env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o),
			client.FieldOwner("credo-tests"), client.ForceOwnership)).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
	}
}

// rollOut stands in for the deployment controller and kubelet: for each
// of credo's Deployments, once kustomize-controller has applied it with
// image, the process of the version before (if any) is stopped and the
// Deployment's binary of bin started in its place, one Deployment after
// the other (one replica each: a rollout is a stop and a start). It
// returns when the last one is ready.
func (in *install) rollOut(t *testing.T, g Gomega, image, bin string) {
	ctx := context.Background()
	var deploys appsv1.DeploymentList
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.List(ctx, &deploys, client.InNamespace("credo-system"),
			client.MatchingLabels{"app.kubernetes.io/part-of": "credo"})).To(Succeed())
		g.Expect(deploys.Items).To(HaveLen(3))
		for _, d := range deploys.Items {
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image), "Deployment %s", d.Name)
		}
	}, 3*time.Minute, time.Second).Should(Succeed(), "kustomize-controller applies the Deployments of %s", image)
	for i := range deploys.Items {
		d := &deploys.Items[i]
		var extra []string
		switch d.Name {
		case "credential-controller":
			extra = in.access.Flags()
		case "enrollment-controller":
			extra = []string{"--enrollment-addr=" + in.enrollAddr}
		}
		if p := in.procs[d.Name]; p != nil {
			g.Expect(p.Stop(30*time.Second)).To(Succeed(), "stopping %s", d.Name)
		}
		p, err := fluxinstall.RunDeployment(ctx, env, bin, d, in.flux.EventsURL, extra...)
		g.Expect(err).NotTo(HaveOccurred(), "starting %s of %s", d.Name, image)
		in.procs[d.Name] = p
	}
}

func (in *install) stop() {
	for _, p := range in.procs {
		_ = p.Stop(10 * time.Second)
	}
}

// image is the reference a release's Deployments name their image by.
func image(digest string) string { return publish.ImageName + "@" + digest }

// waitForKustomization waits until the Kustomization flux-system/name is
// Ready=True for the revision of tag.
func waitForKustomization(g Gomega, name, tag string, timeout time.Duration) {
	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind))
		g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: "flux-system", Name: name}, u)).To(Succeed())
		var ks kustomizev1.Kustomization
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ks)).To(Succeed())
		ready := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
		g.Expect(ready).NotTo(BeNil(), "no Ready condition yet")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
		g.Expect(ks.Status.LastAppliedRevision).To(HavePrefix(tag + "@sha256:"))
	}, timeout, time.Second).Should(Succeed(), "Kustomization %s at %s", name, tag)
}

// setTag points the OCIRepository credo at tag: the upgrade, as an
// operator makes it in Git.
func setTag(g Gomega, tag string) {
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind))
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: "flux-system", Name: "credo"}, u)).To(Succeed())
	p := client.MergeFrom(u.DeepCopy())
	g.Expect(unstructured.SetNestedField(u.Object, tag, "spec", "ref", "tag")).To(Succeed())
	g.Expect(env.Client.Patch(ctx, u, p)).To(Succeed())
}

// createPublicKeySecret creates flux-system/credo-cosign with the releases'
// one public key, as the install guide has users create it.
func createPublicKeySecret(t *testing.T, g Gomega, pub []byte) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "credo-cosign"},
		Data:       map[string][]byte{"cosign.pub": pub},
	}
	g.Expect(env.Client.Create(context.Background(), s)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
}
