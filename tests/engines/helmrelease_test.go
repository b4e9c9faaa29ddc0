//go:build engines

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

package engines

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The suites run no helm-controller: these helpers declare HelmReleases
// and write the status it would write.

// helmRelease creates the HelmRelease name in ns, of the chart chartName
// from the HelmRepository apps, suspended or not.
func helmRelease(t *testing.T, c client.Client, ns, name, chartName string, suspend bool) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour}, Suspend: suspend,
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: chartName,
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}}},
	}
	NewWithT(t).Expect(c.Create(context.Background(), hr)).To(Succeed())
	return hr
}

// markReady writes the status helm-controller writes after a successful
// reconciliation of hr's current generation. latest, when not nil, is the
// Helm release version it installed or upgraded to, recorded in Helm's
// storage in hr's namespace: status.history's only entry. hr is read
// again before each attempt, since others (credo) write it meanwhile.
func markReady(t *testing.T, c client.Client, hr *helmv2.HelmRelease, latest *helmv2.Snapshot) {
	t.Helper()
	ctx := context.Background()
	reason, message := "InstallSucceeded", "Helm install succeeded"
	if latest != nil && latest.Version > 1 {
		reason, message = "UpgradeSucceeded", "Helm upgrade succeeded"
	}
	NewWithT(t).Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return err
		}
		if latest != nil {
			hr.Status.StorageNamespace = hr.Namespace
			hr.Status.History = helmv2.Snapshots{latest}
		}
		hr.Status.ObservedGeneration = hr.Generation
		conditions.MarkTrue(hr, meta.ReadyCondition, reason, "%s", message)
		return c.Status().Update(ctx, hr)
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// chart creates a HelmRelease of the chart of its name, Ready (or
// suspended), and the <release>-credentials Secret its chart would
// render: username → password.
func chart(t *testing.T, c client.Client, ns, name string, suspend bool, passwords map[string]string) {
	t.Helper()
	hr := helmRelease(t, c, ns, name, name, suspend)
	markReady(t, c, hr, nil)
	data := map[string][]byte{}
	for u, p := range passwords {
		data[u] = []byte(p)
	}
	NewWithT(t).Expect(c.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-credentials", Namespace: ns}, Data: data},
		client.FieldOwner("helm"))).To(Succeed())
}
