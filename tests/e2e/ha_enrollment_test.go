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
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/tests/devenv"
)

// (e) Agents renewing through the enrollment Service while one of the two
// enrollment-controller replicas is killed outright: every agent keeps
// renewing (the other replica answers, a renewal the killed one never
// answered is retried) and none enrolls again.
func TestAgentsRenewWhileAnEnrollmentReplicaIsKilled(t *testing.T) {
	needCluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	waitReplaced(t, "enrollment-controller", "", nil)
	replicas := podsOf(t, "enrollment-controller")
	g.Expect(len(replicas)).To(BeNumerically(">=", 2), "two replicas by default")

	ns := newNamespace(t, "e2e-agents-ha-")
	newEnrollmentPolicy(t, ns, ttl, grace)
	ca := enrollmentAnchor(t)
	var svc corev1.Service
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: credoNamespace, Name: "enrollment"}, &svc)).To(Succeed())
	image := controllerImage(t, "enrollment-controller")

	const agents = 3
	for i := range agents {
		name := fmt.Sprintf("agent-%d", i)
		tr := &accessv1.JoinTokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: accessv1.JoinTokenRequestSpec{Policy: "agents"}}
		g.Eventually(func() error { return k8s.Create(ctx, tr) }, time.Minute, time.Second).Should(Succeed())
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data:       map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": ca},
		}
		g.Expect(k8s.Create(ctx, secret)).To(Succeed())
		g.Expect(k8s.Create(ctx, agentPod(ns, name, image, svc.Spec.ClusterIP))).To(Succeed())
	}

	// Every agent enrolled and renewing.
	renewals := func(g Gomega) map[string]int64 {
		var ws enrollv1.WorkloadList
		g.Expect(k8s.List(ctx, &ws, client.InNamespace(ns))).To(Succeed())
		out := map[string]int64{}
		for _, w := range ws.Items {
			out[w.Name] = w.Status.Renewals
		}
		return out
	}
	var before map[string]int64
	g.Eventually(func(g Gomega) {
		before = renewals(g)
		g.Expect(before).To(HaveLen(agents))
		for w, n := range before {
			g.Expect(n).To(BeNumerically(">=", 1), "workload %s renewed", w)
		}
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), "agents enrolled and renewed: %s", agentLogs(ctx, ns))

	killed := killPod(t, replicas[0])
	start := time.Now()
	// Three lifetimes of a certificate: each agent renews at least twice.
	g.Consistently(func(g Gomega) { g.Expect(renewals(g)).To(HaveLen(agents)) }, 3*ttl, time.Second).
		Should(Succeed(), "no agent enrolled again (a second Workload)")
	after := renewals(g)
	for w, n := range after {
		g.Expect(n).To(BeNumerically(">=", before[w]+2), "workload %s renewed on after the kill (%d → %d)", w, before[w], n)
	}
	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			g.Expect(c.RestartCount).To(BeZero(), "agent %s never restarted", p.Name)
		}
	}
	t.Logf("%d agents renewed from %v to %v in the %s after %s was killed", agents, before, after, time.Since(start).Round(time.Second), replicas[0].Name)
	waitReplaced(t, "enrollment-controller", "", killed)
}

// enrollmentAnchor is the enrollment CA the enrollment-controller publishes
// (its TrustAnchor's projection in its own namespace): what agents verify
// the listener with.
func enrollmentAnchor(t *testing.T) []byte {
	t.Helper()
	var s corev1.Secret
	NewWithT(t).Eventually(func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: devenv.InstallRelease + ".tenant-ca"}, &s)
	}, time.Minute, time.Second).Should(Succeed(), "the enrollment CA is published")
	return s.Data["ca.crt"]
}

// controllerImage is the image of the controller's Deployment, which holds
// credo-agent too.
func controllerImage(t *testing.T, name string) string {
	t.Helper()
	var d appsv1.Deployment
	NewWithT(t).Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: credoNamespace, Name: name}, &d)).To(Succeed())
	return d.Spec.Template.Spec.Containers[0].Image
}

// agentPod runs credo-agent from the release image against the enrollment
// Service by its name (which the listener's certificate holds), resolved
// to its ClusterIP by a host alias: no cluster DNS is needed.
func agentPod(ns, name, image, clusterIP string) *corev1.Pod {
	const host = "enrollment." + credoNamespace + ".svc"
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "credo-agent"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			TerminationGracePeriodSeconds: new(int64(2)),
			HostAliases:                   []corev1.HostAlias{{IP: clusterIP, Hostnames: []string{host}}},
			Containers: []corev1.Container{{
				Name:            "agent",
				Image:           image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"/credo-agent", "--server=https://" + host, "--ca-file=/etc/credo-agent/ca.crt",
					"--token-file=/etc/credo-agent/token", "--state-dir=/state", "--hostname=" + name + ".vm.example.org",
					"--log-level=debug"},
				VolumeMounts: []corev1.VolumeMount{{Name: "join", MountPath: "/etc/credo-agent", ReadOnly: true}, {Name: "state", MountPath: "/state"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "join", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
				{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
	}
}

// agentLogs is what the agents' pods report, for a failure.
func agentLogs(ctx context.Context, ns string) string {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	out := ""
	for _, p := range pods.Items {
		out += fmt.Sprintf("\n%s: %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
	}
	return out
}
