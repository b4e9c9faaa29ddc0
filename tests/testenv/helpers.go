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

package testenv

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/ports"
)

// NewNamespace creates a namespace with a generated tenant- name.
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	NewWithT(t).Expect(e.Client.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// NewHelmRelease creates HelmReleaseObject(ns, name, chart, labels).
func (e *Env) NewHelmRelease(t testing.TB, ns, name, chart string, labels map[string]string) *helmv2.HelmRelease {
	t.Helper()
	hr := HelmReleaseObject(ns, name, chart, labels)
	NewWithT(t).Expect(e.Client.Create(context.Background(), hr)).To(Succeed())
	return hr
}

// HelmReleaseObject is a HelmRelease of chart from a HelmRepository, as a
// platform's application release is.
func HelmReleaseObject(ns, name, chart string, labels map[string]string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: chart, SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"},
			}},
		},
	}
}

// KStatus computes the kstatus of an object, as kubectl wait and Flux's
// health checks see it.
func KStatus(t *testing.T, obj client.Object) status.Status {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: u})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// WarningEvent waits for the Warning event of reason on the named object of
// kind and returns it: its annotations are the metadata the Flux recorder
// also posts to notification-controller.
func (e *Env) WarningEvent(g Gomega, ns, kind, name, reason string) corev1.Event {
	var found corev1.Event
	g.Eventually(func() bool {
		var list corev1.EventList
		if err := e.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name &&
				ev.Type == corev1.EventTypeWarning && ev.Reason == reason {
				found = ev
				return true
			}
		}
		return false
	}, 15*time.Second, 100*time.Millisecond).Should(BeTrue(), "a %s Warning on %s %s/%s", reason, kind, ns, name)
	return found
}

// ReleaseWarning waits for the Warning event of reason on the HelmRelease
// hr, found as `flux events --for HelmRelease/<name>` and `kubectl describe
// helmrelease` find it (kind, name, namespace, and the UID describe
// matches), and returns it.
func (e *Env) ReleaseWarning(g Gomega, hr *helmv2.HelmRelease, reason string) corev1.Event {
	ev := e.WarningEvent(g, hr.Namespace, helmv2.HelmReleaseKind, hr.Name, reason)
	g.Expect(ev.InvolvedObject.APIVersion).To(Equal(helmv2.GroupVersion.String()))
	g.Expect(ev.InvolvedObject.UID).To(Equal(hr.UID), "the event is on this HelmRelease, not an earlier one of its name")
	return ev
}

// WarningCount is how many times the Warning of reason was recorded on the
// named object of kind: the counts of its Events (the recorder counts a
// repeat of an Event in it).
func (e *Env) WarningCount(g Gomega, ns, kind, name, reason string) int32 {
	var list corev1.EventList
	g.Expect(e.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var n int32
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name &&
			ev.Type == corev1.EventTypeWarning && ev.Reason == reason {
			n += max(ev.Count, 1)
		}
	}
	return n
}

// NewSecret creates a Secret.
func (e *Env) NewSecret(t testing.TB, ns, name string, labels, annotations map[string]string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations}, Data: data}
	NewWithT(t).Expect(e.Client.Create(context.Background(), s)).To(Succeed())
	return s
}

// FreePort returns a TCP port on 127.0.0.1 reserved for this test process
// (see package ports).
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FreeAddr returns a loopback address (127.0.0.1:port) whose port is
// reserved for this test process.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}
