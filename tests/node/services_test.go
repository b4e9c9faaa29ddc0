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
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestService reaches a pod through a ClusterIP Service from the host:
// kube-proxy's iptables rules over EndpointSlices the endpointslice
// controller writes.
func TestService(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	logsOnFailure(t)
	c := cluster.Env.Client

	pod := pausePod("svc-web", "-http", ":8080")
	pod.Labels = map[string]string{"app": "svc-web"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager-node log:\n%s", cluster.Controllers.Tail(30))
			t.Logf("kube-proxy log:\n%s", cluster.Proxy.Tail(40))
			nat, _ := exec.Command("iptables", "-w", "-t", "nat", "-S").CombinedOutput()
			t.Logf("iptables -t nat -S:\n%s", nat)
			var p corev1.Pod
			_ = c.Get(context.Background(), client.ObjectKeyFromObject(pod), &p)
			t.Logf("pod %s on %q: %s %s %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP, p.Status.Conditions)
			var slices discoveryv1.EndpointSliceList
			_ = c.List(context.Background(), &slices, client.InNamespace("default"))
			for _, s := range slices.Items {
				t.Logf("EndpointSlice %s: %+v %+v", s.Name, s.Endpoints, s.Ports)
			}
		} else if testing.Verbose() {
			t.Logf("kube-proxy warnings and errors:\n%s", warnings(cluster.Proxy.LogPath(), 30))
		}
	})

	g.Expect(c.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, c, pod) })
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc-web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: pod.Labels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	g.Expect(c.Create(ctx, svc)).To(Succeed())
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), svc); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Service %s: %v", svc.Name, err)
		}
	})

	start := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		// A new connection each time: one opened before kube-proxy wrote the
		// Service's rules went elsewhere (this machine's network answers
		// unknown addresses) and would be reused.
		resp, err := (&http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Get(fmt.Sprintf("http://%s/", svc.Spec.ClusterIP))
		g.Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		g.Expect(string(body)).To(Equal(pod.Name+"\n"), "GET http://%s/: %s %v", svc.Spec.ClusterIP, resp.Status, resp.Header)
	}).WithTimeout(40 * time.Second).WithPolling(time.Second).Should(Succeed())
	t.Logf("Service %s answered from the pod %s after the pod was created", svc.Spec.ClusterIP, time.Since(start).Round(time.Second))

	var node corev1.Node
	g.Expect(c.Get(ctx, client.ObjectKey{Name: NodeName}, &node)).To(Succeed())
	t.Logf("node taints with the node lifecycle controller: %v", node.Spec.Taints)
}
