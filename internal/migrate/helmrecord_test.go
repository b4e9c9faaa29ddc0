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
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/credo-dev/credo/internal/helmrecord"
)

// TestRendersSecretReadsHelmsOwnRecords writes release records with Helm's
// own storage driver and reads, through rendersSecret, whether the latest
// release renders a Secret of the name, in its manifest or a hook; a status
// that names another release's record, or an older one, is refused.
func TestRendersSecretReadsHelmsOwnRecords(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
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
	type record struct {
		manifest string
		hook     string
	}
	// c holds the records of release db (versions 1 to 4) and of release
	// other (version 1), as Helm's driver writes them.
	c := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
	write := func(release string, v int, r record) {
		kube := fake.NewClientset()
		rls := &rspb.Release{Name: release, Namespace: "t", Version: v, Manifest: r.manifest, Info: &rspb.Info{Status: common.StatusDeployed}}
		if r.hook != "" {
			rls.Hooks = []*rspb.Hook{{Name: "pre", Kind: "Secret", Manifest: r.hook}}
		}
		g.Expect(driver.NewSecrets(kube.CoreV1().Secrets("t")).Create(helmrecord.SecretName(release, v), rls)).To(Succeed())
		s, err := kube.CoreV1().Secrets("t").Get(ctx, helmrecord.SecretName(release, v), metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		s.ResourceVersion = ""
		g.Expect(c.Create(ctx, s)).To(Succeed())
	}
	write("db", 1, record{manifest: "---\n# Source: db/templates/credentials.yaml\n" + chartSecret + "---\n" + configMap})
	write("db", 2, record{manifest: "---\n" + configMap + "---\n" + otherNamespace})
	write("db", 3, record{manifest: configMap, hook: chartSecret})
	write("db", 4, record{})
	write("other", 1, record{manifest: configMap})
	at := func(release string, version int) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "t"}}
		hr.Status.History = helmv2.Snapshots{{Name: release, Namespace: "t", Version: version}}
		return hr
	}
	renders := func(hr *helmv2.HelmRelease) (bool, error) { return rendersSecret(ctx, c, hr, "t", "db-credentials") }

	// The latest is version 4; status.history naming an older one is
	// behind Helm's storage, whoever wrote it.
	got, err := renders(at("db", 4))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeFalse(), "version 4 renders nothing")
	for v := 1; v <= 3; v++ {
		_, err := renders(at("db", v))
		g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("sh.helm.release.v1.db.v%d, newer than status.history names", v+1))))
	}
	_, err = renders(at("other", 1))
	g.Expect(err).To(MatchError(ContainSubstring("status.history names Helm release t/other, its spec t/db")))
	_, err = renders(&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "t"}})
	g.Expect(err).To(MatchError(ContainSubstring("records no Helm release")), "an empty history is no evidence")
	_, err = renders(at("db", 9))
	g.Expect(err).To(MatchError(ContainSubstring("sh.helm.release.v1.db.v9")), "a missing record is an error, not a no")

	// What each version renders, read from a storage holding it alone as
	// the latest.
	for v, want := range map[int]bool{1: true, 2: false, 3: true} {
		alone := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build()
		var s corev1.Secret
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "t", Name: helmrecord.SecretName("db", v)}, &s)).To(Succeed())
		s.ResourceVersion = ""
		g.Expect(alone.Create(ctx, &s)).To(Succeed())
		got, err := rendersSecret(ctx, alone, at("db", v), "t", "db-credentials")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), "version %d", v)
	}

	forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: helmrecord.SecretName("db", 5), Namespace: "t"},
		Data: map[string][]byte{"release": []byte("not base64!")}}
	g.Expect(c.Create(ctx, forged)).To(Succeed())
	_, err = renders(at("db", 5))
	g.Expect(err).To(MatchError(ContainSubstring("is not Helm's record of release db")), "a Secret of the name is not a record")
}
