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

package migrate

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestRendersSecretReadsHelmsOwnRecords writes release records with Helm's
// own storage driver and reads, through rendersSecret, whether the latest
// release renders a Secret of the name.
func TestRendersSecretReadsHelmsOwnRecords(t *testing.T) {
	g := NewWithT(t)
	kube := fake.NewClientset()
	secrets := driver.NewSecrets(kube.CoreV1().Secrets("t"))
	const chartSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
stringData:
  root: not-read
`
	const otherNamespace = `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: elsewhere
`
	const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: db-credentials
`
	manifests := map[int]string{
		1: "---\n# Source: db/templates/credentials.yaml\n" + chartSecret + "---\n" + configMap,
		2: "---\n" + configMap + "---\n" + otherNamespace,
		3: "",
	}
	for v, m := range manifests {
		rls := &rspb.Release{Name: "t-db", Namespace: "t", Version: v, Manifest: m, Info: &rspb.Info{Status: common.StatusDeployed}}
		g.Expect(secrets.Create(helmRecordSecret("t-db", v), rls)).To(Succeed())
	}
	list, err := kube.CoreV1().Secrets("t").List(context.Background(), metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	c := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	for i := range list.Items {
		s := list.Items[i].DeepCopy()
		s.ResourceVersion = ""
		g.Expect(c.Create(context.Background(), s)).To(Succeed())
	}
	hrAt := func(version int) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "t"}}
		hr.Status.StorageNamespace = "t"
		hr.Status.History = helmv2.Snapshots{{Name: "t-db", Namespace: "t", Version: version}}
		return hr
	}
	for v, want := range map[int]bool{1: true, 2: false, 3: false} {
		got, err := rendersSecret(context.Background(), c, hrAt(v), "t", "db-credentials")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), "release version %d", v)
	}
	got, err := rendersSecret(context.Background(), c, &helmv2.HelmRelease{}, "t", "db-credentials")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeFalse(), "a release never installed renders nothing")
	_, err = rendersSecret(context.Background(), c, hrAt(9), "t", "db-credentials")
	g.Expect(err).To(MatchError(ContainSubstring("sh.helm.release.v1.t-db.v9")), "a missing record is an error, not a no")

	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: helmRecordSecret("t-db", 4), Namespace: "t"},
		Data: map[string][]byte{"release": []byte("not base64!")}}
	g.Expect(c.Create(context.Background(), bad)).To(Succeed())
	_, err = rendersSecret(context.Background(), c, hrAt(4), "t", "db-credentials")
	g.Expect(err).To(MatchError(ContainSubstring("decoding the release")))
}
