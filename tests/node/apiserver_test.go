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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAPIServerFromPod proves a pod reaches kube-apiserver through the
// kubernetes Service (10.0.0.1:443, DNATed by kube-proxy to the address
// kube-apiserver advertises, this machine's eth0), as credo's controllers
// in pods must. TLS is not verified: envtest's serving certificate names
// only localhost and 127.0.0.1.
func TestAPIServerFromPod(t *testing.T) {
	needNode(t)
	g := NewWithT(t)
	ctx := t.Context()
	env, _ := startNode(t, ctx, map[string]string{
		// envtest binds 127.0.0.1; the kubernetes Service leads to the
		// advertised address, this machine's eth0.
		"bind-address": "0.0.0.0",
	})
	_, err := StartNodeControllers(env)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = StartProxy(env, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	time.Sleep(3 * time.Second) // kube-proxy's first sync

	pod := pausePod("probe", "-get", "https://10.0.0.1/version")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Containers[0].ReadinessProbe = nil
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, env.Client, pod) })
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(BeElementOf(corev1.PodSucceeded, corev1.PodFailed), "%+v", pod.Status)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	t.Logf("pod %s: GET https://10.0.0.1/version:\n%s", pod.Status.Phase, raw)
	g.Expect(string(raw)).To(ContainSubstring("gitVersion"))
}
