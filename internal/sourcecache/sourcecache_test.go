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

package sourcecache

import (
	"bytes"
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testpki"
)

var keys = trustv1.NewContractKeys("internal.cozystack.io")

func source(annotations map[string]string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "pg-ca", Labels: keys.PublishLabels("pg"), Annotations: annotations,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "cnpg"}},
		},
		Data: data,
	}
}

func transformed(t *testing.T, s *corev1.Secret) *corev1.Secret {
	t.Helper()
	out, err := Transform(keys)(s)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return out.(*corev1.Secret)
}

func TestTransformKeepsOnlyTheCertificatesOfThePublishedKey(t *testing.T) {
	cert, key := testpki.CA(t, "pg-ca")
	other, _ := testpki.CA(t, "other")

	t.Run("the default key's certificates, and no other key", func(t *testing.T) {
		g := NewWithT(t)
		s := transformed(t, source(nil, map[string][]byte{"ca.crt": cert, "tls.key": key, "tls.crt": other}))
		g.Expect(s.Data).To(Equal(map[string][]byte{"ca.crt": cert}))
		g.Expect(s.ManagedFields).To(BeEmpty())
		g.Expect(s.Labels).To(Equal(keys.PublishLabels("pg")))
	})

	t.Run("the key the annotation names", func(t *testing.T) {
		g := NewWithT(t)
		s := transformed(t, source(map[string]string{keys.Key: "tls.crt"}, map[string][]byte{"ca.crt": cert, "tls.crt": other}))
		g.Expect(s.Data).To(Equal(map[string][]byte{"tls.crt": other}))
	})

	t.Run("a value holding a private key is not kept", func(t *testing.T) {
		g := NewWithT(t)
		s := transformed(t, source(nil, map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)}))
		g.Expect(s.Data).To(BeEmpty())
	})

	t.Run("a value that is not certificates is not kept", func(t *testing.T) {
		g := NewWithT(t)
		s := transformed(t, source(nil, map[string][]byte{"ca.crt": []byte("not a certificate")}))
		g.Expect(s.Data).To(BeEmpty())
	})

	t.Run("a value larger than MaxValue is not kept", func(t *testing.T) {
		g := NewWithT(t)
		big := bytes.Repeat(append(append([]byte{}, cert...), '\n'), MaxValue/len(cert)+1)
		g.Expect(len(big)).To(BeNumerically(">", MaxValue))
		s := transformed(t, source(nil, map[string][]byte{"ca.crt": big}))
		g.Expect(s.Data).To(BeEmpty())
	})

	t.Run("kubectl's last-applied-configuration is dropped", func(t *testing.T) {
		g := NewWithT(t)
		s := transformed(t, source(map[string]string{LastAppliedAnnotation: `{"data":{"tls.key":"..."}}`, "keep": "me"},
			map[string][]byte{"ca.crt": cert}))
		g.Expect(s.Annotations).To(Equal(map[string]string{"keep": "me"}))
	})
}

func TestValueSettlesOnlyACachedKey(t *testing.T) {
	g := NewWithT(t)
	cert, key := testpki.CA(t, "pg-ca")
	scheme := runtime.NewScheme()
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	refused := transformed(t, source(nil, map[string][]byte{"ca.crt": key}))
	refused.Name = "refused"
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(transformed(t, source(nil, map[string][]byte{"ca.crt": cert})), refused).Build()
	ctx := context.Background()

	v, ok := Value(ctx, c, client.ObjectKey{Namespace: "ns", Name: "pg-ca"}, "ca.crt")
	g.Expect(ok).To(BeTrue())
	g.Expect(v).To(Equal(cert))
	_, ok = Value(ctx, c, client.ObjectKey{Namespace: "ns", Name: "pg-ca"}, "tls.crt")
	g.Expect(ok).To(BeFalse(), "a key the cache does not hold")
	_, ok = Value(ctx, c, client.ObjectKey{Namespace: "ns", Name: "refused"}, "ca.crt")
	g.Expect(ok).To(BeFalse(), "a value the guard refused")
	_, ok = Value(ctx, c, client.ObjectKey{Namespace: "ns", Name: "absent"}, "ca.crt")
	g.Expect(ok).To(BeFalse(), "a Secret the cache does not hold")
	_, ok = Value(ctx, nil, client.ObjectKey{Namespace: "ns", Name: "pg-ca"}, "ca.crt")
	g.Expect(ok).To(BeFalse(), "no cache")
}
