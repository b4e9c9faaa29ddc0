//go:build e2e

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

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

// The guide docs/guides/headless-pipelines.md works as written on the
// shipped install: its ServiceAccount, bound by its RoleBinding to the
// ClusterRole credo-mint of config/apiservice, mints with `kubectl credo
// mint -o json` and cannot read the account's Secret.
func TestHeadlessPipelineGuide(t *testing.T) {
	e := needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-pipeline-")

	// The guide's first manifest, in a namespace of the test's own.
	guide, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", "guides", "headless-pipelines.md"))
	g.Expect(err).NotTo(HaveOccurred())
	// It is applied from a here-document in a shell block.
	_, manifest, _ := strings.Cut(firstBlock(string(guide), "```sh\n"), "<<'EOF'\n")
	manifest, _, _ = strings.Cut(manifest, "\nEOF\n")
	g.Expect(manifest).To(ContainSubstring("name: credo-mint"))
	path := filepath.Join(t.TempDir(), "deployer.yaml")
	g.Expect(os.WriteFile(path, []byte(strings.ReplaceAll(manifest, "namespace: tenant-demo", "namespace: "+ns)), 0o600)).To(Succeed())
	out, err := e.Kubectl(ctx, "apply", "-f", path)
	g.Expect(err).NotTo(HaveOccurred(), string(out))

	createRelease(t, ns, "app", false)
	account := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "app-db", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{
			Release: "app", Username: "app", Format: credv1.Format{Name: "scram-sha-256"},
		},
	}
	g.Expect(k8s.Create(ctx, account)).To(Succeed())
	waitAccountReady(t, ns, account.Name)

	user, groups := controlplane.ServiceAccountUser(ns, "deployer")
	kubeconfig, err := e.WriteKubeconfig(user, groups, ns+"-deployer.kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	st := mintWithPlugin(t, kubeconfig, ns, account.Name)
	g.Expect(len(st.Password) >= 32).To(BeTrue(), "a password of at least 32 characters")
	var s corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: st.SecretName}, &s)).To(Succeed())
	g.Expect(s.Annotations["credentials.cozystack.io/origin"]).To(Equal("Minted"))

	// Nothing more: the Secret stays out of the pipeline's reach.
	canI := exec.Command(e.KubectlPath, "auth", "can-i", "get", "secrets", "-n", ns, "--kubeconfig", kubeconfig)
	answer, _ := canI.Output()
	g.Expect(strings.TrimSpace(string(answer))).To(Equal("no"))
}

// firstBlock returns the body of the first fenced block opening with fence.
func firstBlock(doc, fence string) string {
	_, body, ok := strings.Cut(doc, fence)
	if !ok {
		return ""
	}
	body, _, _ = strings.Cut(body, "```")
	return body
}

// newNamespace creates a namespace named from prefix, deleted after the test.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// createRelease creates a HelmRelease of the chart name from a
// HelmRepository nobody serves: credo reads releases, it does not install them.
func createRelease(t testing.TB, ns, name string, suspend bool) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Suspend:  suspend,
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: name, SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "none"},
			}},
		},
	}
	if err := k8s.Create(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	return hr
}

// waitAccountReady waits until the CredentialAccount ns/name is Ready.
func waitAccountReady(t testing.TB, ns, name string) {
	t.Helper()
	var a credv1.CredentialAccount
	NewWithT(t).Eventually(func() bool {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &a) == nil && conditions.IsReady(&a)
	}, 2*time.Minute, 500*time.Millisecond).Should(BeTrue(), "CredentialAccount %s/%s Ready: %+v", ns, name, a.Status.Conditions)
}

// mintWithPlugin mints the account with `kubectl credo mint -o json` as
// the kubeconfig's user, retrying while the access API does not list the
// account yet. The password is returned, never printed.
func mintWithPlugin(t *testing.T, kubeconfig, ns, account string) accessv1.MintStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := exec.Command(binPath("kubectl-credo"), "mint", account, "-n", ns, "-o", "json", "--kubeconfig", kubeconfig)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			var st accessv1.MintStatus
			if err := json.Unmarshal(out, &st); err != nil || st.Password == "" {
				t.Fatalf("kubectl credo mint printed no password (%v)", err)
			}
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl credo mint %s/%s: %v: %s", ns, account, err, stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
