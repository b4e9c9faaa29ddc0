//go:build node

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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestReleaseImage runs a pod of the release image (the image index of
// the OCI layout CREDO_NODE_RELEASE names, from `go run ./hack/release
// build --out <dir>`: <dir>/oci; make test-node builds one and sets it)
// and reads its log through the API server, which fetches it from
// kubelet.
func TestReleaseImage(t *testing.T) {
	oci := os.Getenv("CREDO_NODE_RELEASE")
	if oci == "" {
		t.Fatal("CREDO_NODE_RELEASE is not set: run make test-node, which builds a release (make e2e-release) and sets it, " +
			"or set it to a release's OCI layout (go run ./hack/release build --out DIR: DIR/oci)")
	}
	g := NewWithT(t)
	ctx := t.Context()
	logsOnFailure(t)
	c := cluster.Env.Client

	start := time.Now()
	image, err := cluster.ImportRelease(ctx, oci)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("release image %s imported in %s", image, time.Since(start).Round(time.Millisecond))
	// The release's version is the image's tag.
	version := image[strings.LastIndex(image, ":")+1:]
	g.Expect(version).NotTo(Or(BeEmpty(), ContainSubstring("/")), "no tag in %s", image)

	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trust-controller-version", Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			RestartPolicy:                corev1.RestartPolicyNever,
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:            "trust-controller",
				Image:           image,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"/trust-controller", "--version"},
			}},
		},
	}
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, c, pod) })
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "%+v", pod.Status)
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	cs, err := kubernetes.NewForConfig(cluster.Env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	t.Logf("trust-controller --version in a pod of the release image:\n%s", raw)
	g.Expect(strings.TrimSpace(string(raw))).To(ContainSubstring(version))
}
