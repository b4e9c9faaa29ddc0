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

package trust

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Of a release, the trust-controller's cache keeps its metadata, its chart
// name and its chartRef, and nothing else.
func TestReleaseCacheTransformKeepsWhatTheTrustControllerReads(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now()
	om := metav1.ObjectMeta{Name: "pg", Namespace: "tenant", UID: "u1", Generation: 4, ResourceVersion: "17",
		DeletionTimestamp: &now, Finalizers: []string{"finalizers.fluxcd.io"},
		Labels:      map[string]string{"app": "pg", "sharding.fluxcd.io/key": "shard1"},
		Annotations: map[string]string{"event.toolkit.fluxcd.io/token": "t"}}
	full := &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: *om.DeepCopy(),
		Spec: helmv2.HelmReleaseSpec{
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "postgres", Version: "1.x",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}, ValuesFiles: []string{"a.yaml"}}},
			ChartRef:   &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "postgres", Namespace: "cozy-system"},
			Values:     &apiextensionsv1.JSON{Raw: []byte(`{"big":"x"}`)},
			ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: "s"}},
			Suspend:    true,
		},
		Status: helmv2.HelmReleaseStatus{ObservedGeneration: 4, LastAttemptedConfigDigest: "sha256:2f1c"},
	}
	full.Annotations[corev1.LastAppliedConfigAnnotation] = `{"spec":{"values":{"big":"x"}}}`
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}

	out, err := ReleaseCacheTransform()(full)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(&helmv2.HelmRelease{
		TypeMeta:   full.TypeMeta,
		ObjectMeta: om,
		Spec: helmv2.HelmReleaseSpec{
			Chart:    &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "postgres"}},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "postgres", Namespace: "cozy-system"},
		},
	}))
}

// Through Setup's manager: the cached release has no values.
func TestCachedReleasesHoldNoValues(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"alice":{}}}`)}
	g.Expect(env.Client.Update(ctx, hr)).To(Succeed())

	g.Eventually(func(g Gomega) {
		var cached helmv2.HelmRelease
		g.Expect(env.Setup.Manager.GetClient().Get(ctx, client.ObjectKeyFromObject(hr), &cached)).To(Succeed())
		g.Expect(cached.Generation).To(Equal(hr.Generation))
		g.Expect(cached.Spec.Chart.Spec.Chart).To(Equal("postgres"))
		g.Expect(cached.Spec.Values).To(BeNil())
		g.Expect(cached.Spec.Interval).To(BeZero())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}
