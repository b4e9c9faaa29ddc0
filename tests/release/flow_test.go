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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/credo-dev/credo/tests/controlplane"
)

// The release installed by the real Flux controllers, in the order a user
// may meet it: a forged or tampered artifact is refused, the Helm chart
// installs and uninstalls (leaving the CRDs, as documented), and the
// manifests artifact installs through two Kustomizations.
func TestInstallingTheRelease(t *testing.T) {
	flux, err := env.StartFlux(context.Background(), controlplane.FluxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flux.Stop() })
	t.Run("a wrong key or a tampered artifact is refused", testVerificationRefuses)
	t.Run("HelmRelease from the OCI chart", func(t *testing.T) { testHelmReleaseFromTheOCIChart(t, flux) })
	t.Run("Kustomizations from the manifests artifact", func(t *testing.T) { testKustomizationFromTheManifestsArtifact(t, flux) })
}

// createPublicKeySecret creates the Secret flux-system/name holding a cosign
// public key, as the install guide has users create credo-cosign.
func createPublicKeySecret(t *testing.T, g Gomega, name string, pub []byte) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: name},
		Data:       map[string][]byte{"cosign.pub": pub},
	}
	g.Expect(env.Client.Create(context.Background(), s)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), s) })
}

// ociRepository returns the OCIRepository flux-system/name.
func ociRepository(g Gomega, name string) *sourcev1.OCIRepository {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind))
	g.Expect(env.Client.Get(context.Background(), types.NamespacedName{Namespace: "flux-system", Name: name}, u)).To(Succeed())
	var repo sourcev1.OCIRepository
	g.Expect(runtimeConvert(u, &repo)).To(Succeed())
	return &repo
}

// sourceVerified waits until source-controller has verified the
// OCIRepository flux-system/name's signature and made its artifact.
func sourceVerified(g Gomega, name string) {
	g.Eventually(func(g Gomega) {
		repo := ociRepository(g, name)
		v := apimeta.FindStatusCondition(repo.Status.Conditions, sourcev1.SourceVerifiedCondition)
		g.Expect(v).NotTo(BeNil(), "no SourceVerified condition yet")
		g.Expect(v.Status).To(Equal(metav1.ConditionTrue), "%s: %s", v.Reason, v.Message)
		g.Expect(repo.Status.Artifact).NotTo(BeNil())
	}, 2*time.Minute, time.Second).Should(Succeed(), "OCIRepository %s verified", name)
}

// sourceRefused waits until source-controller has refused the
// OCIRepository flux-system/name with its own verification failure, and
// checks that it made no artifact of it.
func sourceRefused(g Gomega, name string) {
	g.Eventually(func(g Gomega) {
		repo := ociRepository(g, name)
		v := apimeta.FindStatusCondition(repo.Status.Conditions, sourcev1.SourceVerifiedCondition)
		g.Expect(v).NotTo(BeNil(), "no SourceVerified condition yet")
		g.Expect(v.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(v.Reason).To(Equal(sourcev1.VerificationError), v.Message)
		ready := apimeta.FindStatusCondition(repo.Status.Conditions, meta.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(sourcev1.VerificationError))
		g.Expect(repo.Status.Artifact).To(BeNil(), "an artifact was made of what failed verification")
	}, 2*time.Minute, time.Second).Should(Succeed(), "OCIRepository %s refused", name)
}

// deleteOCIRepository deletes flux-system/name and waits until it is gone.
func deleteOCIRepository(name string) {
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind))
	u.SetNamespace("flux-system")
	u.SetName(name)
	_ = env.Client.Delete(ctx, u)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && env.Client.Get(ctx, client.ObjectKeyFromObject(u), u) == nil {
		time.Sleep(200 * time.Millisecond)
	}
}

func runtimeConvert(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
