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
	"os"
	"os/exec"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inClusterImage is the image of tests/node/incluster.
const inClusterImage = "docker.io/credo/incluster:1"

// TestInClusterClient proves a pod reaches kube-apiserver as credo's
// controllers in pods must: rest.InClusterConfig through the kubernetes
// Service (10.0.0.1:443, DNATed by kube-proxy to the advertised address),
// TLS verified against the ca.crt kubelet mounts from the kube-root-ca.crt
// ConfigMap, authenticated by its ServiceAccount's projected token, and
// authorized by RBAC: its pods list allowed, its namespaces list Forbidden.
func TestInClusterClient(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	logsOnFailure(t)
	env := cluster.Env
	c := env.Client
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager-node log:\n%s", cluster.Controllers.Tail(40))
			t.Logf("kube-proxy log:\n%s", cluster.Proxy.Tail(40))
		}
	})

	img, err := BuildImage(ctx, t.TempDir(), "./tests/node/incluster", "incluster")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cluster.ImportImage(ctx, inClusterImage, img)).To(Succeed())

	// The root CA publisher writes the serving CA into every namespace;
	// kubelet projects it as ca.crt beside the token.
	ca, err := os.ReadFile(env.ServingCAFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		var cm corev1.ConfigMap
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kube-root-ca.crt"}, &cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("ca.crt", string(ca)))
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	// kube-proxy's rules for the kubernetes Service.
	g.Eventually(func(g Gomega) {
		out, err := exec.CommandContext(ctx, "iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "%s", out)
		g.Expect(string(out)).To(ContainSubstring("default/kubernetes:https"))
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "incluster", Namespace: "default"}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "incluster", Namespace: "default"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "incluster", Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	for _, o := range []client.Object{sa, role, binding} {
		g.Expect(c.Create(ctx, o)).To(Succeed())
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), o); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", o, o.GetName(), err)
			}
		})
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "incluster", Namespace: "default"},
		Spec: corev1.PodSpec{
			ServiceAccountName:            sa.Name,
			RestartPolicy:                 corev1.RestartPolicyNever,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: new(int64(5)),
			Containers: []corev1.Container{{
				Name:            "incluster",
				Image:           inClusterImage,
				ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	t.Cleanup(func() { deletePod(t, c, pod) })
	// The ServiceAccount admission plugin added the projected token volume.
	var volumes []string
	for _, v := range pod.Spec.Volumes {
		volumes = append(volumes, v.Name)
	}
	g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Projected", Not(BeNil()))), "volumes %v", volumes)
	t.Logf("pod volumes: %v", volumes)

	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(BeElementOf(corev1.PodSucceeded, corev1.PodFailed), "%+v", pod.Status)
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.WithoutCancel(ctx))
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	t.Logf("pod %s, its log:\n%s", pod.Status.Phase, raw)
	g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
	// The one pod in default is its own: the other tests delete theirs
	// before they end.
	g.Expect(string(raw)).To(And(
		ContainSubstring("host: https://10.0.0.1:443"),
		ContainSubstring("version: v1.37.2"),
		ContainSubstring("pods in default: 1"),
		ContainSubstring(`list namespaces: Forbidden: namespaces is forbidden: User "system:serviceaccount:default:incluster" cannot list resource "namespaces"`),
	))
}
