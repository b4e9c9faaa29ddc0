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

package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
)

// ReleaseImage is the name the release image is imported under.
const releaseImage = "ghcr.io/credo-dev/credo:v0.0.0-node"

// TestReleaseImage runs a pod of the release image (the image index of
// the OCI layout CREDO_NODE_RELEASE names, from `go run ./hack/release
// build --out <dir>`: <dir>/oci) and reads its log through the API
// server, which fetches it from kubelet.
func TestReleaseImage(t *testing.T) {
	needNode(t)
	oci := os.Getenv("CREDO_NODE_RELEASE")
	if oci == "" {
		t.Skip("set CREDO_NODE_RELEASE to the release's OCI layout (go run ./hack/release build --out DIR: DIR/oci)")
	}
	g := NewWithT(t)
	ctx := t.Context()
	env, rt := startNode(t, ctx, controlplane.Options{})

	idx := releaseIndex(t, oci)
	tarPath := filepath.Join(t.TempDir(), "credo.tar")
	g.Expect(WriteLayoutTar(filepath.Join(t.TempDir(), "layout"), tarPath, releaseImage, nil, idx)).To(Succeed())
	start := time.Now()
	g.Expect(rt.Import(ctx, tarPath)).To(Succeed())
	t.Logf("release image imported in %s", time.Since(start).Round(time.Millisecond))

	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trust-controller-version", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			RestartPolicy:                corev1.RestartPolicyNever,
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:            "trust-controller",
				Image:           releaseImage,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"/trust-controller", "--version"},
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, env.Client, pod) })
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "%+v", pod.Status)
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	t.Logf("trust-controller --version in a pod of the release image:\n%s", raw)
	g.Expect(strings.TrimSpace(string(raw))).To(ContainSubstring("v0.0.0-node"))
}

// releaseIndex is the one image index in the release's OCI layout (which
// also holds the SBOM, signatures and other artifacts).
func releaseIndex(t *testing.T, dir string) v1.ImageIndex {
	t.Helper()
	g := NewWithT(t)
	p, err := layout.FromPath(dir)
	g.Expect(err).NotTo(HaveOccurred())
	top, err := p.ImageIndex()
	g.Expect(err).NotTo(HaveOccurred())
	m, err := top.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	var found []v1.ImageIndex
	for _, d := range m.Manifests {
		t.Logf("layout entry %s %s %v", d.MediaType, d.Digest, d.Annotations)
		if d.MediaType != types.OCIImageIndex {
			continue
		}
		idx, err := top.ImageIndex(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		found = append(found, idx)
	}
	g.Expect(found).To(HaveLen(1), "image indexes in %s", dir)
	return found[0]
}
