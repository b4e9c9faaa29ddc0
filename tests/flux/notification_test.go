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

package flux

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// credoAlertKinds are the kinds config/notification adds to the Alert CRD.
var credoAlertKinds = []string{"TrustAnchor", "CredentialAccount", "EnrollmentPolicy", "JoinToken", "Workload"}

// alertFor is an Alert of tenant-demo on events of kind.
func alertFor(kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "notification.toolkit.fluxcd.io/v1beta3",
		"kind":       "Alert",
		"metadata":   map[string]any{"name": "probe-" + strings.ToLower(kind), "namespace": "tenant-demo"},
		"spec": map[string]any{
			"providerRef":  map[string]any{"name": "platform-oncall"},
			"eventSources": []any{map[string]any{"kind": kind, "name": "*"}},
		},
	}}
}

// The Alert CRD as Flux ships it refuses credo's kinds; with the
// config/notification component applied to Flux's installation it accepts
// them (and still refuses anything else), and the shipped Alert and
// Provider are valid.
func TestNotificationComponentLetsAlertsSelectCredoKinds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	crdFile := repoPath("config", "testdata", "crds", "notification.toolkit.fluxcd.io_alerts.yaml")

	for _, kind := range credoAlertKinds {
		err := dryRun(ctx, alertFor(kind))
		g.Expect(err).To(HaveOccurred(), "Flux's Alert CRD knows no %s", kind)
		g.Expect(isInvalid(err)).To(BeTrue(), "%v", err)
	}
	g.Expect(dryRun(ctx, alertFor("HelmRelease"))).To(Succeed(), "the probe Alert is valid for a Flux kind")

	// Flux's installation, as a bootstrapped flux-system kustomization
	// would hold it, with the component added.
	dir := t.TempDir()
	raw, err := os.ReadFile(crdFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "alerts-crd.yaml"), raw, 0o600)).To(Succeed())
	rel, err := filepath.Rel(dir, repoPath("config", "notification"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - alerts-crd.yaml\ncomponents:\n  - "+rel+"\n"),
		0o600)).To(Succeed())
	objs := build(g, dir)

	crds := byKind(objs, "CustomResourceDefinition")
	g.Expect(crds).To(HaveLen(1))
	g.Expect(setCRDSpec(crds[0])).To(Succeed())
	t.Cleanup(func() { restoreAlertCRD(t, crdFile) })

	for _, kind := range credoAlertKinds {
		g.Eventually(func() error { return dryRun(ctx, alertFor(kind)) }, 30*time.Second, 200*time.Millisecond).
			Should(Succeed(), "an Alert on %s", kind)
	}
	err = dryRun(ctx, alertFor("Secret"))
	g.Expect(err).To(HaveOccurred(), "the enum still refuses other kinds")
	g.Expect(isInvalid(err)).To(BeTrue(), "%v", err)

	// The component's RBAC and the shipped Alert and Provider.
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		g.Expect(byKind(objs, kind)).To(HaveLen(1))
		dryRunAll(g, byKind(objs, kind))
	}
	binding := byKind(objs, "ClusterRoleBinding")[0]
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	g.Expect(subjects).To(ConsistOf(And(HaveKeyWithValue("name", "notification-controller"), HaveKeyWithValue("namespace", "flux-system"))))
	alerts := build(g, repoPath("config", "samples", "flux", "alerts"))
	g.Expect(byKind(alerts, "Alert")).To(HaveLen(1))
	g.Expect(byKind(alerts, "Provider")).To(HaveLen(1))
	dryRunAll(g, alerts)
	var alert notificationv1.Alert
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(byKind(alerts, "Alert")[0].Object, &alert)).To(Succeed())
	g.Expect(alert.Spec.EventSeverity).To(Equal("error"), "the Alert routes Warnings")
	var kinds []any
	for _, s := range alert.Spec.EventSources {
		kinds = append(kinds, s.Kind)
	}
	g.Expect(kinds).To(ConsistOf(toAny(credoAlertKinds)...), "the sample Alert covers every kind that records events")
}

// setCRDSpec replaces the spec of the installed CRD by crd's.
func setCRDSpec(crd *unstructured.Unstructured) error {
	installed := &unstructured.Unstructured{}
	installed.SetGroupVersionKind(crd.GroupVersionKind())
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), installed); err != nil {
		return err
	}
	installed.Object["spec"] = crd.Object["spec"]
	return env.Client.Update(context.Background(), installed)
}

// restoreAlertCRD puts the Alert CRD back as Flux ships it, for the tests
// that run after.
func restoreAlertCRD(t *testing.T, crdFile string) {
	g := NewWithT(t)
	raw, err := os.ReadFile(crdFile)
	g.Expect(err).NotTo(HaveOccurred())
	shipped := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal(raw, &shipped.Object)).To(Succeed())
	g.Eventually(func() error { return setCRDSpec(shipped) }, 10*time.Second, 200*time.Millisecond).Should(Succeed())
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
