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

package fieldowner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func desiredSecret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "pg.tenant-ca", Namespace: "tenant-a",
			Labels: map[string]string{"internal.cozystack.io/tenant-ca": "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: "pg", UID: "pg-uid", BlockOwnerDeletion: ptr.To(false),
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"ca.crt": []byte("certificates")},
	}
}

// applies records the payloads of the applies made through it (a pure
// step: what is sent, not what an API server makes of it).
func applies(payloads *[]map[string]any, opts *[]client.ApplyOption) client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(_ context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, o ...client.ApplyOption) error {
			raw, err := json.Marshal(obj)
			if err != nil {
				return err
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			*payloads = append(*payloads, m)
			*opts = append(*opts, o...)
			return nil
		},
	}).Build()
}

// ApplyOver sends the desired fields and nothing else, with the version
// read as the precondition, forced under the owner; desired is untouched.
func TestApplyOverSendsTheDesiredFieldsAndThePrecondition(t *testing.T) {
	g := NewWithT(t)
	var payloads []map[string]any
	var opts []client.ApplyOption
	desired := desiredSecret()

	_, err := ApplyOver(context.Background(), applies(&payloads, &opts), desired, "42", TrustController)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(payloads).To(HaveLen(1))
	u := payloads[0]
	g.Expect(u).To(HaveKeyWithValue("apiVersion", "v1"))
	g.Expect(u).To(HaveKeyWithValue("kind", "Secret"))
	g.Expect(u).To(HaveLen(5), "apiVersion, kind, metadata, type, data; no status, no zero value")
	g.Expect(u).To(HaveKeyWithValue("type", string(corev1.SecretTypeOpaque)))
	g.Expect(u).To(HaveKeyWithValue("data", map[string]any{"ca.crt": base64.StdEncoding.EncodeToString([]byte("certificates"))}))
	meta := u["metadata"].(map[string]any)
	g.Expect(meta).To(HaveKeyWithValue("resourceVersion", "42"), "the precondition of the apply")
	g.Expect(meta).To(HaveKeyWithValue("labels", map[string]any{"internal.cozystack.io/tenant-ca": "true"}))
	g.Expect(meta["creationTimestamp"]).To(BeNil())
	g.Expect(meta).To(HaveKey("ownerReferences"))

	applied := &client.ApplyOptions{}
	applied.ApplyOptions(opts)
	g.Expect(applied.FieldManager).To(Equal(TrustController))
	g.Expect(applied.Force).To(HaveValue(BeTrue()))
	g.Expect(desired).To(Equal(desiredSecret()), "desired, which a create sends, is left as it was")
}

// Without a version read there is no apply: it would create a missing
// object or merge into whatever is there.
func TestApplyOverRefusesToApplyWithoutAPrecondition(t *testing.T) {
	g := NewWithT(t)
	var payloads []map[string]any
	var opts []client.ApplyOption

	_, err := ApplyOver(context.Background(), applies(&payloads, &opts), desiredSecret(), "", TrustController)

	g.Expect(err).To(MatchError("applying Secret pg.tenant-ca: no resourceVersion to apply over"))
	g.Expect(payloads).To(BeEmpty())
}
