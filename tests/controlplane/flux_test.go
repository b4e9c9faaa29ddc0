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

package controlplane_test

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
)

// The four Flux controllers start under their own ServiceAccounts and
// become ready, and helm-controller, with the RBAC of a real install,
// reconciles a HelmRelease: it records the generation it observed.
func TestFluxControllersStartAndReconcile(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	flux, err := env.StartFlux(ctx, controlplane.FluxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flux.Stop() })
	for _, name := range controlplane.FluxControllers {
		g.Expect(flux.Controllers).To(HaveKey(name))
	}
	g.Expect(flux.EventsURL).NotTo(BeEmpty())

	release := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: newNamespace(t)},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart:     "app",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "missing"},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, release)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(release), release)).To(Succeed())
		g.Expect(release.Status.Conditions).NotTo(BeEmpty())
	}, time.Minute, 200*time.Millisecond).Should(Succeed(), "helm-controller reconciles the HelmRelease")
}
