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
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	notificationapiv1 "github.com/fluxcd/notification-controller/api/v1"
	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1beta1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// releaseWarnings are the Warnings provokeWarnings makes credo record,
// by release.
var releaseWarnings = map[string]string{"kafka": trustv1.PrivateKeyDetectedReason, "nats": trustv1.NameCollisionReason}

// provokeWarnings makes credo record releaseWarnings in ns: kafka publishes
// a CA with its private key, and nats's projection name is taken by a Secret
// credo did not write. It returns the private keys that must never leave.
func provokeWarnings(t *testing.T, ns string) (keys [][]byte) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	publish := func(release string, data []byte) {
		g.Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: release + "-ca", Namespace: ns, Labels: map[string]string{
				"internal.cozystack.io/publish-ca-cert":         "true",
				"internal.cozystack.io/publish-ca-cert-release": release,
			}},
			Data: map[string][]byte{"ca.crt": data},
		})).To(Succeed())
	}
	createRelease(t, ns, "kafka", false)
	kafkaCA, kafkaKey := testpki.CA(t, "kafka-ca")
	publish("kafka", append(append([]byte{}, kafkaCA...), kafkaKey...))
	createRelease(t, ns, "nats", false)
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "nats" + trustv1.ProjectionSuffix, Namespace: ns},
		StringData: map[string]string{"ca.crt": "written by someone else"},
	})).To(Succeed())
	natsCA, natsKey := testpki.CA(t, "nats-ca")
	publish("nats", natsCA)
	return [][]byte{kafkaKey, natsKey}
}

// The real flux CLI shows credo's Warnings about a release among the
// release's events: `flux events --for HelmRelease/<release>`.
func TestFluxEventsShowReleaseWarnings(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	fluxDir, err := controlplane.FluxAssetsDir("flux")
	g.Expect(err).NotTo(HaveOccurred())
	ns := newNamespace(t, "e2e-flux-events-")
	provokeWarnings(t, ns)
	for release, reason := range releaseWarnings {
		g.Eventually(func() string {
			out, _ := exec.Command(filepath.Join(fluxDir, "flux"), "events", "--for", "HelmRelease/"+release,
				"-n", ns, "--kubeconfig", e.Kubeconfig).CombinedOutput()
			return string(out)
		}, 2*time.Minute, time.Second).Should(MatchRegexp(`Warning\s+`+reason+`\s`), "flux events --for HelmRelease/%s", release)
	}
}

// notification-controller delivers credo's Warnings about a release, on
// the HelmRelease and on credo's TrustAnchor (an Alert kind
// config/notification adds), through an Alert to a generic webhook
// Provider, with no key material in any payload.
func TestNotificationControllerDeliversReleaseWarnings(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-alerts-")

	hook := &testenv.EventSink{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	provider := &notificationv1.Provider{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook", Namespace: ns},
		Spec:       notificationv1.ProviderSpec{Type: notificationv1.GenericProvider, Address: srv.URL},
	}
	g.Expect(k8s.Create(ctx, provider)).To(Succeed())
	alert := &notificationv1.Alert{
		ObjectMeta: metav1.ObjectMeta{Name: "credo-warnings", Namespace: ns},
		Spec: notificationv1.AlertSpec{
			ProviderRef:   meta.LocalObjectReference{Name: provider.Name},
			EventSeverity: eventv1beta1.EventSeverityError,
			EventSources: []notificationapiv1.CrossNamespaceObjectReference{
				{Kind: helmv2.HelmReleaseKind, Name: "*"},
				{Kind: trustv1.TrustAnchorKind, Name: "*"},
			},
		},
	}
	g.Expect(k8s.Create(ctx, alert)).To(Succeed())
	keys := provokeWarnings(t, ns)

	for release, reason := range releaseWarnings {
		for _, kind := range []string{helmv2.HelmReleaseKind, trustv1.TrustAnchorKind} {
			g.Eventually(func() *eventv1beta1.Event { return hook.Find(kind, release, reason) }, 2*time.Minute, 250*time.Millisecond).
				ShouldNot(BeNil(), "notification-controller delivers %s on %s/%s to the webhook", reason, kind, release)
		}
	}
	hook.ExpectNoKeyMaterial(g, keys...)
}
