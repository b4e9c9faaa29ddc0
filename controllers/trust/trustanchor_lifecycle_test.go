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
	"strconv"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testpki"
)

func TestSuspendedAnchorLeavesTheProjectionAsItIs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "postgres", nil)
	cert1, _ := testpki.CA(t, "db-ca-1")
	src := env.NewSecret(t, ns, "db-ca", testKeys.PublishLabels("db"), nil, map[string][]byte{"ca.crt": cert1})
	projectionOf(g, ns, "db")
	ta := anchorWith(g, ns, "db", ready)

	ta.Spec.Suspend = true
	g.Expect(env.Client.Update(ctx, ta)).To(Succeed())
	anchorWith(g, ns, "db", func(ta *trustv1.TrustAnchor) bool { return ta.Spec.Suspend })
	time.Sleep(time.Second) // let the suspend reach the controller's cache
	cert2, _ := testpki.CA(t, "db-ca-2")
	src.Data["ca.crt"] = cert2
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	g.Consistently(func() []byte { return projectionOf(g, ns, "db").Data["ca.crt"] }, 3*time.Second, 200*time.Millisecond).
		Should(Equal(cert1))

	ta = anchorWith(g, ns, "db", func(*trustv1.TrustAnchor) bool { return true })
	ta.Spec.Suspend = false
	g.Expect(env.Client.Update(ctx, ta)).To(Succeed())
	g.Eventually(func() []byte { return projectionOf(g, ns, "db").Data["ca.crt"] }, 10*time.Second, 100*time.Millisecond).
		Should(Equal(cert2))
}

func TestRequestedAtIsHandledAndRecorded(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "mq", "rabbitmq", nil)
	cert, _ := testpki.CA(t, "mq-ca")
	env.NewSecret(t, ns, "mq-ca", testKeys.PublishLabels("mq"), nil, map[string][]byte{"ca.crt": cert})
	ta := anchorWith(g, ns, "mq", ready)

	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	patch := client.MergeFrom(ta.DeepCopy())
	metav1.SetMetaDataAnnotation(&ta.ObjectMeta, meta.ReconcileRequestAnnotation, token)
	g.Expect(env.Client.Patch(ctx, ta, patch)).To(Succeed())
	anchorWith(g, ns, "mq", func(ta *trustv1.TrustAnchor) bool { return ta.Status.LastHandledReconcileAt == token })
}

func TestKeyAddedToTheProjectionByAnotherWriterIsRemoved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "kv", "etcd", nil)
	cert, _ := testpki.CA(t, "kv-ca")
	env.NewSecret(t, ns, "kv-ca", testKeys.PublishLabels("kv"), nil, map[string][]byte{"ca.crt": cert})
	p := projectionOf(g, ns, "kv")
	anchorWith(g, ns, "kv", ready)

	p.Data["tls.key"] = []byte("smuggled")
	g.Expect(env.Client.Update(ctx, p, client.FieldOwner("someone-else"))).To(Succeed())
	// Any event of the projection reconciles the release.
	g.Eventually(func() map[string][]byte { return projectionOf(g, ns, "kv").Data }, 10*time.Second, 100*time.Millisecond).
		Should(Equal(map[string][]byte{"ca.crt": cert}))
}

// The projection's own events reconcile nothing when they are the echo of
// the controller's write, and reconcile the release when anyone else
// changed it: each change below is written back.
func TestProjectionChangedByAnotherWriterIsWrittenBack(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "kv2", "etcd", nil)
	cert, _ := testpki.CA(t, "kv2-ca")
	env.NewSecret(t, ns, "kv2-ca", testKeys.PublishLabels("kv2"), nil, map[string][]byte{"ca.crt": cert})
	anchorWith(g, ns, "kv2", ready)
	restored := func() *corev1.Secret {
		var p *corev1.Secret
		g.Eventually(func(g Gomega) {
			p = projectionOf(g, ns, "kv2")
			g.Expect(p.Data).To(Equal(map[string][]byte{"ca.crt": cert}))
			g.Expect(p.Labels).To(HaveKeyWithValue(testKeys.TenantCA, "true"))
			g.Expect(p.OwnerReferences).To(HaveLen(1))
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		return p
	}

	p := restored()
	other, _ := testpki.CA(t, "other")
	p.Data["ca.crt"] = other
	g.Expect(env.Client.Update(ctx, p, client.FieldOwner("someone-else"))).To(Succeed(), "a ca.crt edited, digest left as it was")
	p = restored()
	delete(p.Labels, testKeys.TenantCA)
	g.Expect(env.Client.Update(ctx, p, client.FieldOwner("someone-else"))).To(Succeed(), "the label removed")
	p = restored()
	g.Expect(env.Client.Delete(ctx, p)).To(Succeed(), "the projection deleted")
	restored()
}

func TestCertificateExpiringSoonIsProjectedAndReported(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "old", "mysql", nil)
	cert, _ := testpki.CAUntil(t, "old-ca", time.Now().Add(48*time.Hour))
	env.NewSecret(t, ns, "old-ca", testKeys.PublishLabels("old"), nil, map[string][]byte{"ca.crt": cert})

	g.Expect(projectionOf(g, ns, "old").Data["ca.crt"]).To(Equal(cert), "clients still need the anchor")
	ta := anchorWith(g, ns, "old", hasReason(trustv1.CertificateWarningCondition, trustv1.ExpiringSoonReason))
	g.Eventually(func() bool { return ready(anchorWith(g, ns, "old", ready)) }).Should(BeTrue(), "expiring soon is still Ready")
	g.Expect(conditions.GetMessage(ta, trustv1.CertificateWarningCondition)).To(ContainSubstring("CN=old-ca"))
	g.Expect(warningEvents(g, ns, "old")).To(ContainElement(trustv1.ExpiringSoonReason))
}

func TestSuspendedTrustSourceKeepsItsAnchorsButMakesNoNewOnes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	ts := &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{Name: "rule-" + ns},
		Spec:       trustv1.TrustSourceSpec{ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"engine": ns}}, SecretName: "{release}-ca"},
	}
	g.Expect(env.Client.Create(ctx, ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	cert, _ := testpki.CA(t, "one-ca")
	env.NewSecret(t, ns, "one-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	env.NewSecret(t, ns, "two-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	env.NewHelmRelease(t, ns, "one", "x", map[string]string{"engine": ns})
	anchorWith(g, ns, "one", ready)

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)).To(Succeed())
	ts.Spec.Suspend = true
	g.Expect(env.Client.Update(ctx, ts)).To(Succeed())
	time.Sleep(time.Second)
	env.NewHelmRelease(t, ns, "two", "x", map[string]string{"engine": ns})
	g.Consistently(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "two"}, &trustv1.TrustAnchor{})
	}, 3*time.Second, 200*time.Millisecond).ShouldNot(Succeed())
	ta := anchorWith(g, ns, "one", func(*trustv1.TrustAnchor) bool { return true })
	g.Expect(conditions.IsReady(ta)).To(BeTrue(), "the suspended rule's anchor is not withdrawn")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "one.tenant-ca"}, &corev1.Secret{})).To(Succeed())
}

// What CEL does not check of a selector at admission (the syntax of keys
// and values; tests/security checks the operators) the controller refuses.
func TestTrustSourceWithABadSelectorIsStalled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ts := &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-selector"},
		Spec: trustv1.TrustSourceSpec{Chart: "nothing-matches", SecretName: "{release}-ca",
			ReleaseSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "not a label key", Operator: metav1.LabelSelectorOpIn, Values: []string{"x"}}}}},
	}
	g.Expect(env.Client.Create(ctx, ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)
		return conditions.GetReason(ts, meta.StalledCondition)
	}, 10*time.Second, 100*time.Millisecond).Should(Equal(trustv1.InvalidSelectorReason))
	g.Expect(conditions.IsReady(ts)).To(BeFalse())
}

func TestTrustSourceRecordsAHandledReconcileRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ts := &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{Name: "requested"},
		Spec:       trustv1.TrustSourceSpec{Chart: "nothing", SecretName: "{release}-ca"},
	}
	g.Expect(env.Client.Create(ctx, ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	// It matches nothing, and says so once reconciled.
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)
		return conditions.GetReason(ts, meta.ReadyCondition)
	}, 10*time.Second, 100*time.Millisecond).Should(Equal(trustv1.NoReleasesMatchedReason))

	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	patch := client.MergeFrom(ts.DeepCopy())
	metav1.SetMetaDataAnnotation(&ts.ObjectMeta, meta.ReconcileRequestAnnotation, token)
	g.Expect(env.Client.Patch(ctx, ts, patch)).To(Succeed())
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)
		return ts.Status.LastHandledReconcileAt
	}, 10*time.Second, 100*time.Millisecond).Should(Equal(token))
}
