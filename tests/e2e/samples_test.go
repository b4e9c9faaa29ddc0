//go:build e2e

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

package e2e

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSamplesAreApplied(t *testing.T) {
	g := NewWithT(t)
	var hr helmv2.HelmRelease
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: "tenant-demo", Name: "postgres-main"}, &hr)).To(Succeed())
}

// The cluster credo runs on must collect garbage: every projection credo
// writes relies on it to disappear with its HelmRelease.
func TestClusterCollectsDependentsOfDeletedHelmRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-gc-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })

	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns.Name},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Suspend:  true,
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "app", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "none"},
			}},
		},
	}
	g.Expect(k8s.Create(ctx, hr)).To(Succeed())
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "app-dependent", Namespace: ns.Name,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind,
			Name: hr.Name, UID: hr.UID, BlockOwnerDeletion: ptr.To(false),
		}},
	}}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	g.Expect(k8s.Delete(ctx, hr)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(dep), &corev1.ConfigMap{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue())
}
