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

package controllers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// testCA returns a self-signed CA certificate and its private key, PEM encoded.
func testCA(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	return testCAUntil(t, cn, time.Now().Add(365*24*time.Hour))
}

// testCAUntil is testCA with a chosen expiry.
func testCAUntil(t testing.TB, cn string, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func newTestNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

func newHelmRelease(t *testing.T, ns, name, chart string, labels map[string]string) *helmv2.HelmRelease {
	t.Helper()
	hr := newHelmReleaseObject(ns, name, chart, labels)
	NewWithT(t).Expect(k8sClient.Create(context.Background(), hr)).To(Succeed())
	return hr
}

func newHelmReleaseObject(ns, name, chart string, labels map[string]string) *helmv2.HelmRelease {
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

func newSecret(t *testing.T, ns, name string, labels, annotations map[string]string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations}, Data: data}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), s)).To(Succeed())
	return s
}

func publishLabels(release string) map[string]string {
	return map[string]string{testKeys.PublishCACert: "true", testKeys.Release: release}
}

// projectionOf waits for the projection of a release and returns it.
func projectionOf(g Gomega, ns, release string) *corev1.Secret {
	var s corev1.Secret
	g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release + trustv1.ProjectionSuffix}, &s)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return &s
}

// anchorWith waits until the release's TrustAnchor satisfies match.
func anchorWith(g Gomega, ns, release string, match func(*trustv1.TrustAnchor) bool) *trustv1.TrustAnchor {
	var ta trustv1.TrustAnchor
	g.Eventually(func() bool {
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta); err != nil {
			return false
		}
		return match(&ta)
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "TrustAnchor %s/%s conditions: %+v", ns, release, &ta.Status.Conditions)
	return &ta
}

func ready(ta *trustv1.TrustAnchor) bool {
	return conditions.IsReady(ta) && ta.Status.ObservedGeneration == ta.Generation
}

func hasReason(cond, reason string) func(*trustv1.TrustAnchor) bool {
	return func(ta *trustv1.TrustAnchor) bool {
		return conditions.IsTrue(ta, cond) && conditions.GetReason(ta, cond) == reason
	}
}

// kstatusOf computes the kstatus of an object, as kubectl wait and Flux's
// health checks see it.
func kstatusOf(t *testing.T, obj client.Object) status.Status {
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
