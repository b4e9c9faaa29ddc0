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

package tenantprojection

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestDecodeReadsTheCACertEntriesWithTheirDefaults(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: internal.cozystack.io/v1alpha1
kind: TenantProjection
metadata:
  name: postgres-main-ca
  namespace: tenant-a
  uid: 5d3c
  labels: {helm.toolkit.fluxcd.io/name: postgres-main}
spec:
  projections:
    - {type: CACert, sourceSecretName: postgres-main-ca}
    - {type: CACert, sourceSecretName: other, sourceKey: " tls.crt "}
    - {type: CACert, sourceSecretName: "  "}
    - {type: Token, sourceSecretName: not-a-ca}
`), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetGeneration(3)
	s := Decode(u)
	if s.Release != "postgres-main" || s.Name != "postgres-main-ca" || s.Namespace != "tenant-a" || s.UID != "5d3c" || s.Generation != 3 {
		t.Fatalf("metadata: %+v", s)
	}
	want := []Source{{SecretName: "postgres-main-ca", Key: "ca.crt"}, {SecretName: "other", Key: "tls.crt"}}
	if len(s.Sources) != len(want) || s.Sources[0] != want[0] || s.Sources[1] != want[1] {
		t.Fatalf("sources: %+v, want %+v", s.Sources, want)
	}
	ref := s.OwnerReference()
	if ref.Kind != "TenantProjection" || ref.APIVersion != "internal.cozystack.io/v1alpha1" || ref.UID != "5d3c" ||
		ref.Controller == nil || !*ref.Controller || ref.BlockOwnerDeletion == nil || *ref.BlockOwnerDeletion {
		t.Fatalf("owner reference: %+v", ref)
	}
	if got, ok := PlatformOwner(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"ownerReferences": []any{map[string]any{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "x", "uid": "1"},
			map[string]any{"apiVersion": "internal.cozystack.io/v1alpha1", "kind": "TenantProjection", "name": "postgres-main-ca", "uid": "5d3c"}},
	}}}); !ok || got.Name != "postgres-main-ca" {
		t.Fatalf("PlatformOwner: %+v %v", got, ok)
	}
	if _, ok := PlatformOwner(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"ownerReferences": []any{map[string]any{"apiVersion": "example.org/v1", "kind": "TenantProjection", "name": "x", "uid": "1"}},
	}}}); ok {
		t.Fatal("a TenantProjection of another group is no platform owner")
	}
}
