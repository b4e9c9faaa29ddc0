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
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	eventv1beta1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// The acceptance test of credo's alerts: the real trust-controller, told
// where notification-controller's event receiver is (--events-addr), meets
// a Secret whose published key holds a private key, and the receiver gets a
// Warning naming the reason and the object, with the metadata an Alert's
// provider shows, and no key material; the same Warning on the release's
// HelmRelease, which an Alert on HelmReleases receives.
func TestRejectedKeyBearingSourceReachesTheEventReceiver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	bin := filepath.Join(t.TempDir(), "trust-controller")
	build := exec.Command("go", "build", "-o", bin, "./cmd/trust-controller")
	build.Dir = controlplane.RepoRoot()
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "go build: %s", out)

	rc := &testenv.EventSink{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	proc, err := env.StartProcess("trust-controller-events", bin, nil,
		"--events-addr="+srv.URL, "--metrics-addr=0", "--health-addr=0")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = proc.Stop(10 * time.Second) })

	const ns, release = "alerts-demo", "kafka"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, testenv.HelmReleaseObject(ns, release, "kafka", nil))).To(Succeed())
	cert, key := testpki.CA(t, "kafka-ca")
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka-cluster-ca", Namespace: ns, Labels: map[string]string{
			"internal.cozystack.io/publish-ca-cert":         "true",
			"internal.cozystack.io/publish-ca-cert-release": release,
		}},
		Data: map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)},
	})).To(Succeed())

	var got *eventv1beta1.Event
	g.Eventually(func() *eventv1beta1.Event {
		g.Expect(proc.FailIfExited()).To(Succeed())
		got = rc.Find(trustv1.TrustAnchorKind, "", trustv1.PrivateKeyDetectedReason)
		return got
	}, 2*time.Minute, 250*time.Millisecond).ShouldNot(BeNil(), "a PrivateKeyDetected event reaches the receiver")

	g.Expect(got.InvolvedObject.Kind).To(Equal(trustv1.TrustAnchorKind))
	g.Expect(got.InvolvedObject.APIVersion).To(Equal(trustv1.GroupVersion.String()))
	g.Expect(got.InvolvedObject.Name).To(Equal(release))
	g.Expect(got.InvolvedObject.Namespace).To(Equal(ns))
	g.Expect(got.Severity).To(Equal(eventv1beta1.EventSeverityError), "a Warning, which an Alert with eventSeverity: error routes")
	g.Expect(got.ReportingController).To(Equal(trust.ControllerName))
	g.Expect(got.Message).To(ContainSubstring("kafka-cluster-ca"))
	g.Expect(got.Metadata).To(And(
		HaveKeyWithValue(trustv1.EventReleaseKey, release),
		HaveKeyWithValue(trustv1.EventSourceKey, "kafka-cluster-ca"),
		HaveKeyWithValue(trustv1.EventSourceKeyKey, "ca.crt"),
		HaveKeyWithValue(trustv1.EventProjectionKey, release+trustv1.ProjectionSuffix),
		HaveKeyWithValue(trustv1.EventLegKey, string(trustv1.LegLabel)),
	))
	var onRelease *eventv1beta1.Event
	g.Eventually(func() *eventv1beta1.Event {
		onRelease = rc.Find(helmv2.HelmReleaseKind, "", trustv1.PrivateKeyDetectedReason)
		return onRelease
	}, 30*time.Second, 250*time.Millisecond).ShouldNot(BeNil(), "the same Warning reaches the receiver on the HelmRelease")
	g.Expect(onRelease.InvolvedObject.APIVersion).To(Equal(helmv2.GroupVersion.String()))
	g.Expect(onRelease.InvolvedObject.Name).To(Equal(release))
	g.Expect(onRelease.InvolvedObject.Namespace).To(Equal(ns))
	g.Expect(onRelease.Severity).To(Equal(eventv1beta1.EventSeverityError))
	g.Expect(onRelease.ReportingController).To(Equal(trust.ControllerName))
	g.Expect(onRelease.Message).To(Equal(got.Message))
	g.Expect(onRelease.Metadata).To(Equal(got.Metadata))

	rc.ExpectNoKeyMaterial(g, key)
}
