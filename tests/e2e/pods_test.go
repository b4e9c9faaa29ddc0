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
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// credoNamespace is where hack/ci/install.sh installs credo.
const credoNamespace = "credo-system"

// Every pod of a controller deleted with no grace period (kubelet still
// sends SIGTERM, and SIGKILL two seconds later) is replaced by its
// Deployment, and the replacement, once it leads, does the work: the
// trust-controller projects again a tenant-ca deleted after the kill, the
// credential-controller serves mints again.
func TestAKilledControllerPodIsReplacedAndWorkResumes(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	t.Run("trust-controller", func(t *testing.T) {
		g := NewWithT(t)
		key := client.ObjectKey{Namespace: "tenant-demo", Name: "postgres-main.tenant-ca"}
		var before corev1.Secret
		g.Eventually(func() error { return k8s.Get(ctx, key, &before) }, 2*time.Minute, time.Second).Should(Succeed())
		killed := killPods(t, "trust-controller")
		waitReplaced(t, "trust-controller", "credo-trust-controller-leader-election", killed)
		g.Expect(k8s.Delete(ctx, &before)).To(Succeed())
		var after corev1.Secret
		g.Eventually(func() error { return k8s.Get(ctx, key, &after) }, 2*time.Minute, time.Second).Should(Succeed(),
			"the replacement projects the deleted tenant-ca again")
		g.Expect(after.UID).NotTo(Equal(before.UID))
		g.Expect(after.Data).To(Equal(before.Data))
	})
	t.Run("credential-controller", func(t *testing.T) {
		g := NewWithT(t)
		killed := killPods(t, "credential-controller")
		waitReplaced(t, "credential-controller", "credo-credential-controller-leader-election", killed)
		var m *accessv1.Mint
		g.Eventually(func() error { var err error; m, err = mint(ctx, "tenant-demo", "ch-logs-app"); return err }, 2*time.Minute, time.Second).
			Should(Succeed(), "the replacement serves mints")
		ok, err := holdsVerifierOf(ctx, "tenant-demo", m.Status.SecretName, m.Status.Password)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue(), "the Secret %s holds the verifier of the minted password", m.Status.SecretName)
	})
}

// mint mints a password for account through kube-apiserver.
func mint(ctx context.Context, ns, account string) (*accessv1.Mint, error) {
	m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: account}}
	m.Namespace = ns
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := k8s.Create(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// holdsVerifierOf reports whether the account Secret ns/name holds the
// sha256-hex verifier of password. Neither is ever printed: a failure
// names the Secret only.
func holdsVerifierOf(ctx context.Context, ns, name, password string) (bool, error) {
	var s corev1.Secret
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		return false, err
	}
	return string(s.Data[credv1.PasswordKey]) == sha256Hex(password), nil
}

// killPods deletes the controller's pods with no grace period and returns
// their UIDs.
func killPods(t *testing.T, name string) map[string]bool {
	t.Helper()
	pods := podsOf(t, name)
	NewWithT(t).Expect(pods).NotTo(BeEmpty(), "pods of %s", name)
	killed := map[string]bool{}
	for _, p := range pods {
		maps.Copy(killed, killPod(t, p))
	}
	return killed
}

// waitReplaced waits until the controller's pods are all new (none of
// killed) and Ready, as many as its Deployment wants, and, for a
// leader-elected controller (lease not ""), until one of them holds its
// Lease: the work after that is the replacement's.
func waitReplaced(t *testing.T, name, lease string, killed map[string]bool) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	start := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(replaced(ctx, name, killed)).To(Succeed())
		if lease == "" {
			return
		}
		holder := leaderName(ctx, lease)
		g.Expect(holder).NotTo(BeEmpty(), "the Lease %s is held", lease)
		var p corev1.Pod
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: credoNamespace, Name: holder}, &p)).To(Succeed(), "the Lease %s is held by a pod that exists", lease)
		g.Expect(killed[string(p.UID)]).To(BeFalse(), "the Lease %s is held by a replacement", lease)
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	t.Logf("%s replaced, Ready and leading %s after the kill", name, time.Since(start).Round(time.Second))
}

// replaced is nil once the controller's Deployment has as many pods as it
// wants, every one Ready, none terminating and none of old.
func replaced(ctx context.Context, name string, old map[string]bool) error {
	var d appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: credoNamespace, Name: name}, &d); err != nil {
		return err
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(credoNamespace), client.MatchingLabels{"app.kubernetes.io/name": name}); err != nil {
		return err
	}
	if len(pods.Items) != int(*d.Spec.Replicas) {
		return fmt.Errorf("%d pods of %s, want %d", len(pods.Items), name, *d.Spec.Replicas)
	}
	for _, p := range pods.Items {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		switch {
		case old[string(p.UID)]:
			return fmt.Errorf("pod %s is an old one", p.Name)
		case p.DeletionTimestamp != nil:
			return fmt.Errorf("pod %s is terminating", p.Name)
		case !ready:
			return fmt.Errorf("pod %s is not Ready", p.Name)
		}
	}
	return nil
}

// podUIDs are the UIDs of the controller's pods.
func podUIDs(t *testing.T, name string) map[string]bool {
	t.Helper()
	uids := map[string]bool{}
	for _, p := range podsOf(t, name) {
		uids[string(p.UID)] = true
	}
	return uids
}
