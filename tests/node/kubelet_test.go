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
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestNode runs a pod of the image built here on the node (its kubelet
// registered with the test control plane and Ready) and reaches it from
// the host on its pod IP.
func TestNode(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	logsOnFailure(t)
	c := cluster.Env.Client

	var node corev1.Node
	g.Expect(c.Get(ctx, client.ObjectKey{Name: NodeName}, &node)).To(Succeed())
	g.Expect(node.Status.Conditions).To(ContainElement(And(
		HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))), "%+v", node.Status.Conditions)

	pod := pausePod("node-web", "-http", ":8080")
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, c, pod) })

	start := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning), "%+v", pod.Status)
		g.Expect(pod.Status.PodIP).NotTo(BeEmpty())
		g.Expect(pod.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	t.Logf("pod Running and Ready on %s %s after it was created", pod.Status.PodIP, time.Since(start).Round(time.Second))

	resp, err := http.Get(fmt.Sprintf("http://%s:8080/", pod.Status.PodIP))
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(string(body)).To(Equal(pod.Name + "\n"))
}

// warnings returns up to n distinct klog warning and error lines of a log.
func warnings(path string, n int) string {
	b, _ := os.ReadFile(path)
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) < 2 || (l[0] != 'W' && l[0] != 'E') || l[1] < '0' || l[1] > '9' {
			continue
		}
		// Drop the date, time and pid for the dedup key.
		key := l
		if f := strings.SplitN(l, "]", 2); len(f) == 2 {
			key = f[1]
		}
		if !seen[key] && len(out) < n {
			seen[key] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// pausePod is a pod of the pause image with args (with -http it answers
// with its host name, the pod's name), tolerating every taint (kubelet's
// not-ready one among them) and mounting no token.
func pausePod(name string, args ...string) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: new(int64(5)),
			Containers: []corev1.Container{{
				Name:            name,
				Image:           PauseImage,
				ImagePullPolicy: corev1.PullNever,
				Args:            args,
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)},
				}, PeriodSeconds: 1},
			}},
		},
	}
}

// deletePod deletes pod and waits until kubelet has removed it, so its
// sandbox and network are torn down before the next test or the node
// stops.
func deletePod(t *testing.T, c client.Client, pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting pod %s: %v", pod.Name, err)
		return
	}
	for ctx.Err() == nil {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("pod %s still there a minute after its deletion", pod.Name)
}
