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

package projection

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/tests/testpki"
)

func testWriter(c client.Client) *Writer {
	return &Writer{Client: c, Reader: c, FieldOwner: testFieldOwner, TenantCALabel: testLabel}
}

func mustBundle(t *testing.T, raw []byte) *pem.Bundle {
	t.Helper()
	b, err := pem.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDesiredIsTheKeyFreeProjectionOwnedByTheRelease(t *testing.T) {
	g := NewWithT(t)
	release := newRelease("pg")
	bundle := mustBundle(t, caCert(t, "pg-ca"))

	s := testWriter(nil).desired("tenant-a", ReleaseOwner(release), bundle)

	g.Expect(s.Name).To(Equal("pg" + trustv1.ProjectionSuffix))
	g.Expect(s.Namespace).To(Equal("tenant-a"))
	g.Expect(s.Labels).To(Equal(map[string]string{testLabel: "true"}))
	g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(s.Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: bundle.PEM}), "ca.crt alone, re-encoded by the guard")
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{{
		APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind,
		Name: "pg", UID: release.UID, BlockOwnerDeletion: ptr.To(false),
	}}))
}

func TestDesiredOfAPlatformAnchorIsOwnedByTheTrustAnchor(t *testing.T) {
	g := NewWithT(t)
	ta := &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: "credo", UID: "anchor-uid"},
		Spec:       trustv1.TrustAnchorSpec{Release: "credo", Owner: &trustv1.ProjectionOwner{Kind: trustv1.OwnerTrustAnchor}},
	}

	s := testWriter(nil).desired("credo-system", AnchorOwner(ta), mustBundle(t, caCert(t, "enrollment-ca")))

	g.Expect(s.Name).To(Equal("credo" + trustv1.ProjectionSuffix))
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{{
		APIVersion: trustv1.GroupVersion.String(), Kind: trustv1.TrustAnchorKind,
		Name: "credo", UID: "anchor-uid", BlockOwnerDeletion: ptr.To(false),
	}}))
	g.Expect(testWriter(nil).metadataCurrent(s, s.Annotations[DigestAnnotation], ownerID{uid: "anchor-uid", kind: helmv2.HelmReleaseKind})).
		To(BeFalse(), "a reference of another kind is not the owner's")
}

func TestOwns(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource, APIVersion: "v1"}
	}
	tests := []struct {
		name       string
		fieldOwner string
		entries    []metav1.ManagedFieldsEntry
		want       bool
	}{
		{"a Secret without managed fields is foreign", testFieldOwner, nil, false},
		{"a Secret written only by another manager is foreign", testFieldOwner,
			[]metav1.ManagedFieldsEntry{entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "")}, false},
		{"a manager whose name only starts with credo's is another manager", testFieldOwner,
			[]metav1.ManagedFieldsEntry{entry(testFieldOwner+"-impostor", metav1.ManagedFieldsOperationApply, "")}, false},
		{"a Secret created by credo is ours", testFieldOwner,
			[]metav1.ManagedFieldsEntry{entry(testFieldOwner, metav1.ManagedFieldsOperationUpdate, "")}, true},
		{"a Secret applied by credo is ours", testFieldOwner,
			[]metav1.ManagedFieldsEntry{entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, ""), entry(testFieldOwner, metav1.ManagedFieldsOperationApply, "")}, true},
		{"an entry of credo's on a subresource does not make the Secret ours", testFieldOwner,
			[]metav1.ManagedFieldsEntry{entry(testFieldOwner, metav1.ManagedFieldsOperationUpdate, "status")}, false},
		{"a writer without a field owner owns nothing", "",
			[]metav1.ManagedFieldsEntry{entry("", metav1.ManagedFieldsOperationUpdate, "")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Writer{FieldOwner: tt.fieldOwner, TenantCALabel: testLabel}
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: tt.entries}}
			NewWithT(t).Expect(w.owns(s)).To(Equal(tt.want))
		})
	}
}

func TestMetadataCurrent(t *testing.T) {
	release := newRelease("pg")
	bundle := mustBundle(t, caCert(t, "pg-ca"))
	w := testWriter(nil)
	tests := []struct {
		name   string
		mutate func(*corev1.Secret)
		want   bool
	}{
		{"the desired projection is current", func(*corev1.Secret) {}, true},
		{"a foreign extra label and owner reference leave it current", func(s *corev1.Secret) {
			s.Labels["team"] = "a"
			s.OwnerReferences = append([]metav1.OwnerReference{{Kind: "ConfigMap", Name: "x", UID: "other"}}, s.OwnerReferences...)
		}, true},
		{"a missing label is stale", func(s *corev1.Secret) { delete(s.Labels, testLabel) }, false},
		{"a label of another value is stale", func(s *corev1.Secret) { s.Labels[testLabel] = "false" }, false},
		{"no digest is stale", func(s *corev1.Secret) { delete(s.Annotations, DigestAnnotation) }, false},
		{"the digest of other content is stale", func(s *corev1.Secret) { s.Annotations[DigestAnnotation] = strings.Repeat("0", 64) }, false},
		{"no owner reference is stale", func(s *corev1.Secret) { s.OwnerReferences = nil }, false},
		{"an owner reference to a former release of the name is stale", func(s *corev1.Secret) { s.OwnerReferences[0].UID = "former" }, false},
		{"an owner reference of another kind is stale", func(s *corev1.Secret) { s.OwnerReferences[0].Kind = "Kustomization" }, false},
		{"an owner reference that blocks deletion is stale", func(s *corev1.Secret) { s.OwnerReferences[0].BlockOwnerDeletion = ptr.To(true) }, false},
		{"an owner reference without blockOwnerDeletion is stale", func(s *corev1.Secret) { s.OwnerReferences[0].BlockOwnerDeletion = nil }, false},
		{"a former owner's reference beside the owner's is stale", func(s *corev1.Secret) {
			s.OwnerReferences = append(s.OwnerReferences, metav1.OwnerReference{
				APIVersion: trustv1.GroupVersion.String(), Kind: trustv1.TrustAnchorKind, Name: "pg", UID: "anchor", BlockOwnerDeletion: ptr.To(false)})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired := w.desired("tenant-a", ReleaseOwner(release), bundle)
			s := desired.DeepCopy()
			tt.mutate(s)
			NewWithT(t).Expect(w.metadataCurrent(s, desired.Annotations[DigestAnnotation], ownerOf(desired))).To(Equal(tt.want))
		})
	}
}

// TestRefusedValueSendsNoRequest: the guard runs before the read, so a
// refused value reaches neither the reader nor the writer (the write tests
// count the requests of a refusal on the real API server: none).
func TestRefusedValueSendsNoRequest(t *testing.T) {
	cert, key := testpki.CA(t, "pg-ca")
	tests := []struct {
		name    string
		raw     []byte
		privKey bool
	}{
		{"a private key alone", key, true},
		{"a certificate followed by its private key", append(append([]byte{}, cert...), key...), true},
		{"an empty value", nil, false},
		{"text that is not a certificate", []byte("hello"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			// A writer without a client: any request it sent would panic.
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("a refused value reached the API client: %v", r)
				}
			}()

			res, err := testWriter(nil).Write(context.Background(), "tenant-a", ReleaseOwner(newRelease("pg")), tt.raw)

			var guard *pem.Error
			g.Expect(err).To(BeAssignableToTypeOf(guard))
			g.Expect(pem.IsPrivateKey(err)).To(Equal(tt.privKey))
			g.Expect(err.Error()).NotTo(ContainSubstring("PRIVATE KEY-----"), "no key material in the error")
			g.Expect(res).To(BeNil())
		})
	}
}
