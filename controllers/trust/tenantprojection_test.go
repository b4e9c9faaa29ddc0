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

package trust

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/tenantprojection"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/platform"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// takeoverNamespaceLabel marks the namespaces a second trust-controller
// serves with --tenant-projections=credo; the suite's, with the default
// platform, serves every other. Relabelling a namespace is the switch
// flipped for it (in a cluster: the flag changed and the pods rolled).
const takeoverNamespaceLabel = "credo.dev/tenant-projections-credo"

var takeoverOnce sync.Once

// startTakeoverManager starts, once, a trust-controller built by Setup as
// cmd/trust-controller builds it, with --tenant-projections=credo, on the
// namespaces labelled takeoverNamespaceLabel.
func startTakeoverManager(t *testing.T) {
	takeoverOnce.Do(func() {
		setup, err := testenv.NewSetup(env.Config, env.Scheme, ControllerName+"-takeover", ConfigureCache)
		if err != nil {
			t.Fatal(err)
		}
		// Its TrustSource reconciler writes the rules' status too: with the
		// suite's options but for the namespaces and the flag, it writes
		// what the suite's does.
		if err := Setup(context.Background(), setup, Options{
			PlatformSourceNamespaces: []string{testSourceNamespace},
			LabelDomain:              testDomain, NamespaceSelector: takeoverNamespaceLabel + "=true",
			ExpiryWarningWindow: 30 * 24 * time.Hour, Concurrent: 2,
			TenantProjections: string(TenantProjectionsCredo),
		}); err != nil {
			t.Fatal(err)
		}
		go func() { _ = setup.Manager.Start(context.Background()) }()
	})
}

// newSentinel creates a TenantProjection as a chart written for the
// platform renders it: named <release>-ca, one CACert entry, labelled by
// helm-controller with the release's name.
func newSentinel(t *testing.T, ns, release, source string) *unstructured.Unstructured {
	u := platform.Sentinel(ns, release, source)
	NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(Succeed())
	return u
}

// runStandIn runs the stand-in of the platform's TenantProjection
// controller on ns until the returned stop is called (or the test ends).
func runStandIn(t *testing.T, ns string) (*platform.TenantProjectionController, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &platform.TenantProjectionController{Client: env.Client, Namespace: ns}
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(func() { cancel() })
	return c, stop
}

// sentinelReady is the Ready condition of the sentinel ns/name.
func sentinelReady(g Gomega, ns, name string) metav1.Condition {
	u := tenantprojection.New()
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return metav1.Condition{Type: "Ready", Status: metav1.ConditionStatus(m["status"].(string)), Reason: m["reason"].(string)}
		}
	}
	return metav1.Condition{}
}

// poke asks for a reconcile of the release's TrustAnchor, as
// `flux reconcile`-style tooling does.
func poke(g Gomega, ns, release string) {
	var ta trustv1.TrustAnchor
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta)).To(Succeed())
	before := ta.DeepCopy()
	metav1.SetMetaDataAnnotation(&ta.ObjectMeta, meta.ReconcileRequestAnnotation, time.Now().Format(time.RFC3339Nano))
	g.Expect(env.Client.Patch(context.Background(), &ta, client.MergeFrom(before))).To(Succeed())
}

// setTakeover flips --tenant-projections for the namespace: credo when on.
func setTakeover(g Gomega, ns string, on bool) {
	var n corev1.Namespace
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &n)).To(Succeed())
	before := n.DeepCopy()
	if on {
		metav1.SetMetaDataLabel(&n.ObjectMeta, takeoverNamespaceLabel, "true")
	} else {
		delete(n.Labels, takeoverNamespaceLabel)
	}
	g.Expect(env.Client.Patch(context.Background(), &n, client.MergeFrom(before))).To(Succeed())
}

func TestAPlatformProjectionIsRecordedAndNeverWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "postgres-main", "postgres", nil)
	cert, key := testpki.CA(t, "pg-ca")
	// CloudNativePG's <release>-ca: key-bearing.
	env.NewSecret(t, ns, "postgres-main-ca", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})
	newSentinel(t, ns, "postgres-main", "postgres-main-ca")
	standIn, _ := runStandIn(t, ns)

	ta := anchorWith(g, ns, "postgres-main", func(ta *trustv1.TrustAnchor) bool {
		return ready(ta) && conditions.IsTrue(ta, trustv1.ProjectedByPlatformCondition)
	})
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegTenantProjection))
	g.Expect(ta.Status.TenantProjection).To(Equal("postgres-main-ca"))
	g.Expect(ta.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: "postgres-main-ca", Key: "ca.crt"}))
	g.Expect(ta.OwnerReferences).To(ConsistOf(HaveField("UID", hr.UID)))
	g.Expect(ta.Status.Certificates).To(ConsistOf(HaveField("Subject", "CN=pg-ca")))
	g.Expect(conditions.GetReason(ta, trustv1.ProjectedByPlatformCondition)).To(Equal(trustv1.PlatformProjectionReason))

	// The projection is the stand-in's alone, for as long as both run.
	g.Consistently(func(g Gomega) {
		p := projectionOf(g, ns, "postgres-main")
		g.Expect(fieldowner.Wrote(p, TrustAnchorFieldOwner)).To(BeFalse(), "credo wrote the platform's projection")
		ref, ok := tenantprojection.PlatformOwner(p)
		g.Expect(ok).To(BeTrue(), "the projection is owner-referenced to a TenantProjection")
		g.Expect(ref.Name).To(Equal("postgres-main-ca"))
		_, _, collisions := standIn.Counts()
		g.Expect(collisions).To(BeZero(), "the platform's controller met a Secret it did not write")
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(sentinelReady(g, ns, "postgres-main-ca").Reason).To(Equal(tenantprojection.ProjectedReason))

	// A rotation reaches the record through the platform's write.
	cert2, key2 := testpki.CA(t, "pg-ca-2")
	var src corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main-ca"}, &src)).To(Succeed())
	src.Data = map[string][]byte{"ca.crt": cert2, "ca.key": key2}
	g.Expect(env.Client.Update(ctx, &src)).To(Succeed())
	anchorWith(g, ns, "postgres-main", func(ta *trustv1.TrustAnchor) bool {
		return len(ta.Status.Certificates) == 1 && ta.Status.Certificates[0].Subject == "CN=pg-ca-2"
	})
	creates, _, collisions := standIn.Counts()
	g.Expect(creates).To(Equal(1))
	g.Expect(collisions).To(BeZero())

	// One Normal event, however many reconciles.
	g.Eventually(func(g Gomega) int32 { return normalEvents(g, ns, "postgres-main", trustv1.PlatformProjectionReason) }, 10*time.Second, 100*time.Millisecond).Should(Equal(int32(1)))
	g.Expect(env.WarningCount(g, ns, trustv1.TrustAnchorKind, "postgres-main", trustv1.NameCollisionReason)).To(BeZero())
}

func TestCredoTakesThePlatformsProjectionOverInPlaceAndHandsItBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startTakeoverManager(t)
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "postgres-main", "postgres", nil)
	cert, key := testpki.CA(t, "pg-ca")
	env.NewSecret(t, ns, "postgres-main-ca", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})
	sentinel := newSentinel(t, ns, "postgres-main", "postgres-main-ca")
	_, stopStandIn := runStandIn(t, ns)

	anchorWith(g, ns, "postgres-main", func(ta *trustv1.TrustAnchor) bool {
		return conditions.IsTrue(ta, trustv1.ProjectedByPlatformCondition)
	})
	before := projectionOf(g, ns, "postgres-main")

	// The platform's controller is stopped, then credo is switched to
	// project: the same Secret, the same bytes, credo's from now on.
	stopStandIn()
	setTakeover(g, ns, true)
	poke(g, ns, "postgres-main")
	var after *corev1.Secret
	g.Eventually(func(g Gomega) {
		after = projectionOf(g, ns, "postgres-main")
		g.Expect(after.OwnerReferences).To(ConsistOf(HaveField("UID", hr.UID)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(after.UID).To(Equal(before.UID))
	g.Expect(after.Data).To(Equal(before.Data))
	g.Expect(after.Labels).To(HaveKeyWithValue(testKeys.TenantCA, "true"))
	g.Expect(after.Labels).NotTo(HaveKey(tenantprojection.CopyLabel))
	g.Expect(after.Annotations).NotTo(HaveKey(tenantprojection.SourceAnnotation))
	ta := anchorWith(g, ns, "postgres-main", func(ta *trustv1.TrustAnchor) bool {
		return ready(ta) && !conditions.Has(ta, trustv1.ProjectedByPlatformCondition)
	})
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegTenantProjection))
	g.Eventually(func(g Gomega) int32 { return normalEvents(g, ns, "postgres-main", trustv1.AdoptedReason) }, 10*time.Second, 100*time.Millisecond).Should(Equal(int32(1)))
	g.Eventually(func(g Gomega) {
		g.Expect(sentinelReady(g, ns, "postgres-main-ca")).To(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", tenantprojection.ProjectedReason)))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	// credo follows the source now, in the same Secret.
	cert2, key2 := testpki.CA(t, "pg-ca-2")
	var src corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main-ca"}, &src)).To(Succeed())
	src.Data = map[string][]byte{"ca.crt": cert2, "ca.key": key2}
	g.Expect(env.Client.Update(ctx, &src)).To(Succeed())
	g.Eventually(func(g Gomega) {
		p := projectionOf(g, ns, "postgres-main")
		g.Expect(p.UID).To(Equal(before.UID))
		g.Expect(p.Data).To(HaveKeyWithValue("ca.crt", cert2))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	rotated := projectionOf(g, ns, "postgres-main")

	// Back: credo switched to platform hands the projection to the
	// sentinel, and the platform's controller, started again, takes it as
	// its own: no collision, the same Secret and bytes.
	setTakeover(g, ns, false)
	poke(g, ns, "postgres-main")
	g.Eventually(func(g Gomega) {
		p := projectionOf(g, ns, "postgres-main")
		g.Expect(p.OwnerReferences).To(ConsistOf(HaveField("UID", types.UID(sentinel.GetUID()))))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) int32 { return normalEvents(g, ns, "postgres-main", trustv1.HandedBackReason) }, 10*time.Second, 100*time.Millisecond).Should(Equal(int32(1)))
	standIn, _ := runStandIn(t, ns)
	g.Eventually(func(g Gomega) {
		p := projectionOf(g, ns, "postgres-main")
		g.Expect(p.Labels).To(HaveKeyWithValue(tenantprojection.CopyLabel, "true"))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	back := projectionOf(g, ns, "postgres-main")
	g.Expect(back.UID).To(Equal(before.UID))
	g.Expect(back.Data).To(Equal(rotated.Data))
	creates, _, collisions := standIn.Counts()
	g.Expect(creates).To(BeZero())
	g.Expect(collisions).To(BeZero())
	anchorWith(g, ns, "postgres-main", func(ta *trustv1.TrustAnchor) bool {
		return ready(ta) && conditions.IsTrue(ta, trustv1.ProjectedByPlatformCondition)
	})
}

func TestWithCredoProjectingTheSentinelSaysWhyNot(t *testing.T) {
	g := NewWithT(t)
	startTakeoverManager(t)
	ns := env.NewNamespace(t)
	setTakeover(g, ns, true)
	env.NewHelmRelease(t, ns, "postgres-main", "postgres", nil)
	newSentinel(t, ns, "postgres-main", "postgres-main-ca")
	g.Eventually(func(g Gomega) {
		g.Expect(sentinelReady(g, ns, "postgres-main-ca")).To(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", tenantprojection.SourceNotFoundReason)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	// A source with a private key only: refused, in the platform's words.
	_, key := testpki.CA(t, "pg-ca")
	env.NewSecret(t, ns, "postgres-main-ca", nil, nil, map[string][]byte{"ca.crt": key})
	g.Eventually(func(g Gomega) {
		g.Expect(sentinelReady(g, ns, "postgres-main-ca")).To(HaveField("Reason", tenantprojection.SourceRejectedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

// The sample sentinel, as shipped, is valid against the platform's schema
// and claims its release on the TenantProjection leg; with the platform's
// controller not running, credo (by default) waits for it.
func TestTheTenantProjectionSampleClaimsItsRelease(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	raw, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "samples", "trust", "tenantprojection.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	u := tenantprojection.New()
	g.Expect(yaml.Unmarshal(raw, &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	labels := u.GetLabels()
	labels["helm.toolkit.fluxcd.io/namespace"] = ns
	u.SetLabels(labels)
	g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
	env.NewHelmRelease(t, ns, "postgres-main", "postgres", nil)
	ta := anchorWith(g, ns, "postgres-main", hasReason(trustv1.SourceUnavailableCondition, trustv1.WaitingForPlatformReason))
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegTenantProjection))
	g.Expect(ta.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: "postgres-main-ca", Key: "ca.crt"}))
}

// normalEvents counts the Normal events of reason on the TrustAnchor.
func normalEvents(g Gomega, ns, name, reason string) int32 {
	var list corev1.EventList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var n int32
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == trustv1.TrustAnchorKind && e.InvolvedObject.Name == name && e.Reason == reason && e.Type == corev1.EventTypeNormal {
			n += max(e.Count, 1)
		}
	}
	return n
}
