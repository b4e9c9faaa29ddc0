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
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
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
	needNode(t)
	g := NewWithT(t)
	ctx := t.Context()
	env, rt := startNode(t, ctx, controlplane.Options{InCluster: true})
	c := env.Client
	kcm, err := StartNodeControllers(env)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = StartProxy(env, filepath.Join(env.Dir, "kube-proxy"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager-node log:\n%s", kcm.Tail(40))
		}
	})

	dir := t.TempDir()
	img, err := BuildImage(ctx, dir, "./tests/node/incluster", "incluster")
	g.Expect(err).NotTo(HaveOccurred())
	tarPath := filepath.Join(dir, "incluster.tar")
	g.Expect(WriteLayoutTar(filepath.Join(dir, "layout"), tarPath, inClusterImage, img, nil)).To(Succeed())
	g.Expect(rt.Import(ctx, tarPath)).To(Succeed())

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
	g.Expect(string(raw)).To(And(
		ContainSubstring("host: https://10.0.0.1:443"),
		ContainSubstring("version: v1.37.2"),
		ContainSubstring("pods in default: 1"),
		ContainSubstring(`list namespaces: Forbidden: namespaces is forbidden: User "system:serviceaccount:default:incluster" cannot list resource "namespaces"`),
	))
}
