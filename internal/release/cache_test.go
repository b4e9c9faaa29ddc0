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
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestCacheTransformDropsManagedFieldsAndLastAppliedThenPrunes(t *testing.T) {
	g := NewWithT(t)
	in := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant", UID: "u1", Generation: 3,
			Labels:        map[string]string{"app": "pg"},
			Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: `{"spec":{"values":{}}}`, "keep": "me"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: helmv2.HelmReleaseSpec{Values: &apiextensionsv1.JSON{Raw: []byte(`{"big":"x"}`)}, Suspend: true},
	}
	pruned := 0
	out, err := CacheTransform(func(hr *helmv2.HelmRelease) { pruned++; hr.Spec.Values = nil })(in)
	g.Expect(err).NotTo(HaveOccurred())
	hr := out.(*helmv2.HelmRelease)
	g.Expect(pruned).To(Equal(1))
	g.Expect(hr.ManagedFields).To(BeNil())
	g.Expect(hr.Annotations).To(Equal(map[string]string{"keep": "me"}))
	g.Expect(hr.Spec.Values).To(BeNil())
	g.Expect(hr.Spec.Suspend).To(BeTrue())
	g.Expect(hr.Name).To(Equal("db"))
	g.Expect(hr.UID).To(BeEquivalentTo("u1"))
	g.Expect(hr.Generation).To(BeEquivalentTo(3))
	g.Expect(hr.Labels).To(Equal(map[string]string{"app": "pg"}))

	// A tombstone, or any other object, passes unchanged and unpruned.
	tomb := toolscache.DeletedFinalStateUnknown{Key: "tenant/db", Obj: &helmv2.HelmRelease{}}
	out, err = CacheTransform(func(*helmv2.HelmRelease) { pruned++ })(tomb)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(tomb))
	g.Expect(pruned).To(Equal(1))
}

func TestWithCacheTransformKeepsTheShardSelector(t *testing.T) {
	g := NewWithT(t)
	transform := CacheTransform(func(*helmv2.HelmRelease) {})
	sel := labels.SelectorFromSet(labels.Set{"sharding.fluxcd.io/key": "shard1"})
	secret := &corev1.Secret{}
	byObject := WithCacheTransform(map[client.Object]cache.ByObject{
		&helmv2.HelmRelease{}: {Label: sel},
		secret:                {Label: sel},
	}, transform)
	g.Expect(byObject).To(HaveLen(2))
	for obj, opts := range byObject {
		g.Expect(opts.Label).To(Equal(sel))
		if _, ok := obj.(*helmv2.HelmRelease); ok {
			g.Expect(opts.Transform).NotTo(BeNil())
		} else {
			g.Expect(obj).To(BeIdenticalTo(secret))
			g.Expect(opts.Transform).To(BeNil())
		}
	}

	// Unsharded: an entry of its own.
	byObject = WithCacheTransform(nil, transform)
	g.Expect(byObject).To(HaveLen(1))
	for obj, opts := range byObject {
		g.Expect(obj).To(BeAssignableToTypeOf(&helmv2.HelmRelease{}))
		g.Expect(opts.Label).To(BeNil())
		g.Expect(opts.Transform).NotTo(BeNil())
	}
}
