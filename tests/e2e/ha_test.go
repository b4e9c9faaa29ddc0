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
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/tests/testpki"
)

// mintLoad mints for ns/account one request after another, each retried
// until answered, as a client that retries a 503 does, and checks after
// every answer that the account's Secret holds the verifier of the password
// it was given: no answered password lost. It stops when stop returns true.
type mintLoad struct {
	ns, account string
	answered    int
	retried     int // requests that failed and were sent again
	errs        []string
	latest      time.Duration // the longest a mint waited for its answer, retries included
}

func (l *mintLoad) run(t *testing.T, stop func() bool) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	start := time.Now()
	for deadline := time.Now().Add(5 * time.Minute); !stop(); {
		g.Expect(time.Now().Before(deadline)).To(BeTrue(), "the disruption ended within 5 minutes")
		began := time.Now()
		var m *accessv1.Mint
		for tries := 0; ; tries++ {
			g.Expect(tries).To(BeNumerically("<", 100), "a mint answered within 100 tries: %v", l.errs)
			var err error
			if m, err = mint(ctx, l.ns, l.account); err == nil {
				break
			}
			l.retried++
			l.errs = append(l.errs, fmt.Sprintf("%s: %v%s", time.Since(start).Round(time.Millisecond), err, serverSaid(err)))
			time.Sleep(200 * time.Millisecond)
		}
		l.answered++
		l.latest = max(l.latest, time.Since(began))
		ok, err := holdsVerifierOf(ctx, l.ns, m.Status.SecretName, m.Status.Password)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ok).To(BeTrue(), "after mint %d the Secret %s holds the verifier of the password it answered", l.answered, m.Status.SecretName)
		time.Sleep(50 * time.Millisecond)
	}
}

// steadyFor is how long mints must be answered at once, each on its
// first try, before a test disrupts the access API.
const steadyFor = 5 * time.Second

// waitSteady waits until mints of ns/account have been answered at once for
// steadyFor in a row. A replica deleted with no grace period, by the test
// before, serves on for the kubelet's grace (two seconds) over the
// connection kube-apiserver holds open to it, while kube-apiserver starts
// refusing its ServiceAccount token (each answer then a 503 that client-go
// sends again after a second), and that connection breaks when the kubelet
// kills it: the Pod object is gone seconds before. A test that measures a
// disruption starts once the last one has ended.
func waitSteady(t *testing.T, ns, account string) {
	t.Helper()
	ctx := context.Background()
	var since time.Time
	var last error
	unsteady := 0
	start := time.Now()
	for deadline := start.Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("mints were not answered at once for %s in a row within 2 minutes; the last error: %v%s", steadyFor, last, serverSaid(last))
		}
		began := time.Now()
		_, err := mint(ctx, ns, account)
		if err != nil || time.Since(began) >= time.Second {
			since, last = time.Time{}, err
			unsteady++
			continue
		}
		if since.IsZero() {
			since = began
		}
		if time.Since(since) >= steadyFor {
			t.Logf("mints answered at once for %s after %s (%d answers failed or took a second or more before)",
				steadyFor, time.Since(start).Round(100*time.Millisecond), unsteady)
			return
		}
	}
}

// serverSaid is what the server wrote with an error answer that was not a
// Status (kube-apiserver's aggregator answers a 503 in plain text, which
// client-go's error leaves out): it tells "service unavailable" (the
// APIService not Available) from a failed connection to a replica.
func serverSaid(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return ""
	}
	var said []string
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			said = append(said, strings.TrimSpace(c.Message))
		}
	}
	if len(said) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the server said %q)", strings.Join(said, "; "))
}

func (l *mintLoad) report(t *testing.T, what string) {
	t.Logf("%s: %d mints answered, %d requests retried (%.1f%%), the longest wait for an answer %s",
		what, l.answered, l.retried, 100*float64(l.retried)/float64(max(1, l.answered+l.retried)), l.latest.Round(time.Millisecond))
	for _, e := range l.errs {
		t.Logf("  retried at %s", e)
	}
}

// (a) A credential-controller replica deleted with no grace period under a
// steady mint load: every mint is answered, no answered password lost;
// requests that failed on the dying replica are sent again, and how many is
// reported. (Those it answered 503 with Retry-After, its token refused
// once its Pod was gone, client-go sends again itself: they show in the
// longest wait, not in the count.)
func TestMintsWhileACredentialControllerReplicaIsKilled(t *testing.T) {
	needCluster(t)
	waitReplaced(t, "credential-controller", "", nil)
	pods := podsOf(t, "credential-controller")
	NewWithT(t).Expect(len(pods)).To(BeNumerically(">=", 2), "two replicas by default")
	load := &mintLoad{ns: "tenant-demo", account: "ch-logs-app"}
	var killed map[string]bool
	started := time.Now()
	load.run(t, func() bool {
		if killed == nil && time.Since(started) > 2*time.Second {
			killed = killPod(t, pods[0])
		}
		return killed != nil && replaced(context.Background(), "credential-controller", killed) == nil
	})
	load.report(t, "one of two replicas killed")
	NewWithT(t).Expect(load.answered).To(BeNumerically(">", 0))
}

// (b) The credential-controller rolled (kubectl rollout restart) under a
// steady mint load: no mint fails; the rollout takes one replica at a time
// out of the Service before it stops (its readiness fails at SIGTERM, it
// serves --access-api-shutdown-delay more, then drains). It starts once
// mints are answered steadily (waitSteady): the test before kills a replica.
func TestMintsDuringARollout(t *testing.T) {
	needCluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	waitReplaced(t, "credential-controller", "", nil)
	// The test before this one killed a replica: kube-apiserver's
	// availability controller may still hold the APIService unavailable
	// from a check made while the dead pod was an endpoint, and the
	// aggregator refuses every request (503) until its next check. The
	// rollout starts from an APIService that is Available.
	g.Eventually(func() bool { return apiServiceAvailable(ctx) }, 3*time.Minute, 200*time.Millisecond).Should(BeTrue(), "the access APIService is Available before the rollout")
	waitSteady(t, "tenant-demo", "ch-logs-app")
	before := podUIDs(t, "credential-controller")
	var d appsv1.Deployment
	key := client.ObjectKey{Namespace: credoNamespace, Name: "credential-controller"}
	g.Expect(k8s.Get(ctx, key, &d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339Nano)
	g.Expect(k8s.Patch(ctx, &d, patch)).To(Succeed())
	start := time.Now()
	load := &mintLoad{ns: "tenant-demo", account: "ch-logs-app"}
	load.run(t, func() bool { return replaced(ctx, "credential-controller", before) == nil })
	load.report(t, fmt.Sprintf("rollout of %d replicas done in %s", len(before), time.Since(start).Round(time.Second)))
	g.Expect(load.answered).To(BeNumerically(">", 0))
	g.Expect(load.retried).To(BeZero(), "no mint failed during the rollout: %v", load.errs)
}

// (d) The trust-controller's leader deleted with no grace period and a
// source CA rotated at once: the rotation lands, handled by the dying
// leader in its last two seconds or by the replica that leads next, and
// the time it took and the time the Lease took to move are reported. (A
// leader that dies without releasing its Lease, its node lost, is followed
// once the 15s lease expires; that needs a node-level kill, which a test
// against any cluster cannot do.)
func TestARotationLandsWhenTheTrustLeaderIsKilled(t *testing.T) {
	needCluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	const lease = "credo-trust-controller-leader-election"
	waitReplaced(t, "trust-controller", lease, nil)
	leader := leaderPod(t, lease)

	// The leader first, then the source: the rotation arrives while the
	// leader is going and must be handled by the next one.
	killed := killPod(t, leader)
	src := client.ObjectKey{Namespace: "tenant-demo", Name: "postgres-main-ca"}
	var s corev1.Secret
	g.Expect(k8s.Get(ctx, src, &s)).To(Succeed())
	ca, _ := testpki.CA(t, "postgres-main rotated "+time.Now().Format(time.RFC3339Nano))
	original := s.Data
	patch := client.MergeFrom(s.DeepCopy())
	s.Data = map[string][]byte{"ca.crt": ca}
	g.Expect(k8s.Patch(ctx, &s, patch)).To(Succeed())
	rotated := time.Now()
	t.Cleanup(func() {
		var cur corev1.Secret
		if err := k8s.Get(ctx, src, &cur); err == nil {
			patch := client.MergeFrom(cur.DeepCopy())
			cur.Data = original
			_ = k8s.Patch(ctx, &cur, patch)
		}
	})

	g.Eventually(func() string {
		var p corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: "postgres-main.tenant-ca"}, &p); err != nil {
			return err.Error()
		}
		return string(p.Data["ca.crt"])
	}, 2*time.Minute, 100*time.Millisecond).Should(Equal(string(ca)), "the rotated CA is projected")
	t.Logf("rotation projected %s after the source changed and its leader %s was killed", time.Since(rotated).Round(10*time.Millisecond), leader.Name)
	g.Eventually(func() string { return leaderName(ctx, lease) }, time.Minute, 100*time.Millisecond).
		ShouldNot(Or(Equal(leader.Name), BeEmpty()), "another replica leads")
	t.Logf("the Lease moved to %s %s after the leader was killed", leaderName(ctx, lease), time.Since(rotated).Round(100*time.Millisecond))
	waitReplaced(t, "trust-controller", lease, killed)
}

// podsOf are the controller's pods, sorted by name.
func podsOf(t *testing.T, name string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	NewWithT(t).Expect(k8s.List(context.Background(), &pods, client.InNamespace(credoNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": name})).To(Succeed())
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods.Items
}

// leaderPod is the pod holding the Lease.
func leaderPod(t *testing.T, lease string) corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	holder := leaderName(context.Background(), lease)
	g.Expect(holder).NotTo(BeEmpty(), "the Lease %s is held", lease)
	var p corev1.Pod
	g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: credoNamespace, Name: holder}, &p)).To(Succeed())
	return p
}

// leaderName is the name of the pod holding the Lease, "" when none does
// (controller-runtime's identity is <host name, the pod's>_<uuid>).
func leaderName(ctx context.Context, lease string) string {
	var l coordinationv1.Lease
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: credoNamespace, Name: lease}, &l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	holder, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return holder
}

// killPod deletes the pod with no grace period (kubelet sends SIGTERM and,
// two seconds later, SIGKILL) and returns its UID as a set.
func killPod(t *testing.T, p corev1.Pod) map[string]bool {
	t.Helper()
	NewWithT(t).Expect(k8s.Delete(context.Background(), &p, client.GracePeriodSeconds(0))).To(Succeed())
	return map[string]bool{string(p.UID): true}
}

// (c) Every credential-controller replica gone (scaled to zero), with the
// APIService installed as users install it: a namespace deleted meanwhile
// waits in Terminating with NamespaceDeletionDiscoveryFailure (Kubernetes
// cannot finish discovery without the aggregated API), while what it holds
// is deleted; once the replicas are back it goes. The times are reported.
func TestANamespaceDeletedWhileTheAccessAPIIsDownGoesOnceItIsBack(t *testing.T) {
	needCluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: credoNamespace, Name: "credential-controller"}
	var d appsv1.Deployment
	g.Expect(k8s.Get(ctx, key, &d)).To(Succeed())
	replicas := *d.Spec.Replicas
	scale := func(n int32) {
		g.Expect(k8s.Get(ctx, key, &d)).To(Succeed())
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = &n
		g.Expect(k8s.Patch(ctx, &d, patch)).To(Succeed())
	}
	scale(0)
	t.Cleanup(func() { scale(replicas); waitReplaced(t, "credential-controller", "", nil) })
	stopped := time.Now()
	g.Eventually(func() bool { return apiServiceAvailable(ctx) }, 3*time.Minute, 500*time.Millisecond).Should(BeFalse())
	t.Logf("APIService Available=False %s after the replicas were scaled to zero", time.Since(stopped).Round(time.Second))
	// kube-apiserver serves the group's last discovery document for a while
	// after the APIService turns unavailable; a namespace deleted before it
	// calls the group stale goes at once (none of the access API's resources
	// is deleted with a namespace).
	dc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error { _, _, err := dc.ServerGroupsAndResources(); return err }, 3*time.Minute, 500*time.Millisecond).
		Should(MatchError(ContainSubstring("access.credo.dev/v1alpha1")), "discovery of access.credo.dev fails")
	t.Logf("discovery of access.credo.dev failing %s after the replicas were scaled to zero", time.Since(stopped).Round(time.Second))

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-wedged-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content", Namespace: ns.Name}}
	g.Expect(k8s.Create(ctx, cm)).To(Succeed())
	g.Expect(k8s.Delete(ctx, ns)).To(Succeed())
	deleted := time.Now()
	g.Eventually(func(g Gomega) metav1.ConditionStatus {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ns), ns)).To(Succeed())
		for _, c := range ns.Status.Conditions {
			if c.Type == corev1.NamespaceDeletionDiscoveryFailure {
				return metav1.ConditionStatus(c.Status)
			}
		}
		return ""
	}, 3*time.Minute, 500*time.Millisecond).Should(Equal(metav1.ConditionTrue))
	t.Logf("NamespaceDeletionDiscoveryFailure=True %s after the namespace was deleted", time.Since(deleted).Round(time.Second))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
	},
		time.Minute, 500*time.Millisecond).Should(BeTrue(), "what the namespace holds is deleted meanwhile")
	g.Consistently(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(ns), ns) }, 10*time.Second, time.Second).
		Should(Succeed(), "the namespace waits while the access API is down")

	scale(replicas)
	back := time.Now()
	g.Eventually(func() bool { return apiServiceAvailable(ctx) }, 3*time.Minute, 500*time.Millisecond).Should(BeTrue())
	t.Logf("APIService Available %s after the replicas were scaled back", time.Since(back).Round(time.Second))
	// kube-controller-manager retries the namespace with a backoff that
	// doubles up to a minute.
	g.Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(ns), ns)) },
		3*time.Minute, time.Second).Should(BeTrue(), "the namespace goes once the access API is back")
	t.Logf("namespace gone %s after the replicas were scaled back", time.Since(back).Round(time.Second))
}

// apiServiceAvailable reports whether the access APIService is Available.
func apiServiceAvailable(ctx context.Context) bool {
	var a apiregistrationv1.APIService
	if err := k8s.Get(ctx, client.ObjectKey{Name: "v1alpha1.access.credo.dev"}, &a); err != nil {
		return false
	}
	for _, c := range a.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}

// Every controller survives a node drain: the eviction API (what kubectl
// drain calls) takes one of its two pods and refuses the other (429) until
// the first is replaced, by the controller's PodDisruptionBudget.
func TestEvictionsLeaveEveryControllerAReplica(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	for _, name := range []string{"trust-controller", "credential-controller", "enrollment-controller"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			waitReplaced(t, name, "", nil)
			g.Eventually(func(g Gomega) {
				var pdb policyv1.PodDisruptionBudget
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: credoNamespace, Name: name}, &pdb)).To(Succeed())
				g.Expect(pdb.Status.DisruptionsAllowed).To(BeEquivalentTo(1), "%+v", pdb.Status)
			}).WithTimeout(time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
			pods := podsOf(t, name)
			g.Expect(pods).To(HaveLen(2))
			g.Expect(evict(ctx, pods[0])).To(Succeed(), "the first eviction")
			err := evict(ctx, pods[1])
			g.Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "the second refused while the first is replaced: %v", err)
			t.Logf("second eviction refused: %v", err)
			waitReplaced(t, name, "", map[string]bool{string(pods[0].UID): true})
		})
	}
}

// evict asks the eviction API to evict p, as kubectl drain does.
func evict(ctx context.Context, p corev1.Pod) error {
	return k8s.SubResource("eviction").Create(ctx, &p, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
	})
}
