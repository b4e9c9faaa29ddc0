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

package helmrecord

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestDecodeReadsARecordHelmWrote writes a release with Helm's own storage
// driver and decodes the Secret it wrote.
func TestDecodeReadsARecordHelmWrote(t *testing.T) {
	g := NewWithT(t)
	kube := fake.NewClientset()
	rls := &rspb.Release{Name: "db", Namespace: "t", Version: 3, Manifest: "kind: ConfigMap\n",
		Config: map[string]any{"users": map[string]any{"root": map[string]any{"password_sha256_hex": "abc", "n": 12}}},
		Hooks:  []*rspb.Hook{{Name: "pre", Kind: "Secret", Manifest: "kind: Secret\n"}},
		Info:   &rspb.Info{Status: common.StatusDeployed}}
	g.Expect(driver.NewSecrets(kube.CoreV1().Secrets("t")).Create(SecretName("db", 3), rls)).To(Succeed())
	s, err := kube.CoreV1().Secrets("t").Get(context.Background(), "sh.helm.release.v1.db.v3", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "SecretName is the name Helm's driver gives")
	g.Expect(string(s.Type)).To(Equal(SecretType))

	got, err := Decode(s.Data["release"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Name).To(Equal("db"))
	g.Expect(got.Version).To(Equal(3))
	g.Expect(got.Config).To(MatchJSON(`{"users":{"root":{"password_sha256_hex":"abc","n":12}}}`))
	g.Expect(got.Manifests()).To(Equal([]string{"kind: ConfigMap\n", "kind: Secret\n"}))
}

func TestDecode(t *testing.T) {
	gzipped := func(body []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		return buf.Bytes()
	}
	encode := func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }
	const record = `{"name":"ch","version":2,"manifest":"kind: Secret\n"}`
	atMost := `{"name":"ch","manifest":"` + strings.Repeat("a", MaxSize-len(`{"name":"ch","manifest":""}`)) + `"}`
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "a gzipped record", data: encode(gzipped([]byte(record)))},
		{name: "a record written before Helm compressed them", data: encode([]byte(record))},
		{name: "a record of MaxSize bytes", data: encode(gzipped([]byte(atMost)))},
		{name: "a record larger than MaxSize once decompressed", data: encode(gzipped([]byte(atMost + " "))), wantErr: "larger than 67108864 bytes"},
		{name: "no base64", data: []byte("not base64!"), wantErr: "not base64"},
		{name: "a gzip stream cut short", data: encode(gzipped([]byte(record))[:20]), wantErr: "decompressing"},
		{name: "no JSON", data: encode(gzipped([]byte("kind: Secret"))), wantErr: "not a release record"},
		{name: "JSON of another shape", data: encode([]byte(`{"name":3}`)), wantErr: "not a release record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := Decode(tc.data)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Name).To(Equal("ch"))
		})
	}
}
