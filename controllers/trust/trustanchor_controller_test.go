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
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

func TestLabelLegProjectsOnlyTheCertificateOfAKeyBearingSource(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "kafka", "kafka", nil)
	cert, key := testpki.CA(t, "kafka-ca")
	env.NewSecret(t, ns, "kafka-cluster-ca", testKeys.PublishLabels("kafka"), nil,
		map[string][]byte{"ca.crt": cert, "ca.key": key, "tls.key": key})

	p := projectionOf(g, ns, "kafka")
	g.Expect(p.Data).To(HaveLen(1))
	g.Expect(p.Data).To(HaveKeyWithValue("ca.crt", cert))
	g.Expect(p.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(p.Labels).To(HaveKeyWithValue(testKeys.TenantCA, "true"))
	g.Expect(p.OwnerReferences).To(HaveLen(1))
	g.Expect(p.OwnerReferences[0].UID).To(Equal(hr.UID))
	g.Expect(*p.OwnerReferences[0].BlockOwnerDeletion).To(BeFalse())

	ta := anchorWith(g, ns, "kafka", ready)
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegLabel))
	g.Expect(ta.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: "kafka-cluster-ca", Key: "ca.crt"}))
	g.Expect(ta.Status.ProjectedSecret).To(Equal("kafka.tenant-ca"))
	g.Expect(ta.Status.Certificates).To(HaveLen(1))
	g.Expect(ta.Status.Certificates[0].Subject).To(Equal("CN=kafka-ca"))
	g.Expect(ta.Status.Fingerprint).To(HavePrefix("sha256:"))
	g.Expect(ta.Status.LastRotationTime).NotTo(BeNil())
	g.Expect(testenv.KStatus(t, ta)).To(Equal(status.CurrentStatus))
}

func TestNameLegWaitsForAnAsynchronousSourceThenProjects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	ts := &trustv1.TrustSource{
		ObjectMeta: metav1.ObjectMeta{Name: "cnpg-" + ns},
		Spec: trustv1.TrustSourceSpec{
			Chart: "postgres", SecretName: "{release}-ca",
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		},
	}
	g.Expect(env.Client.Create(ctx, ts)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ts) })
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)

	ta := anchorWith(g, ns, "pg", hasReason(trustv1.SourceUnavailableCondition, trustv1.SourceNotFoundReason))
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegTrustSource))
	g.Expect(ta.Status.TrustSource).To(Equal(ts.Name))
	g.Expect(conditions.IsStalled(ta)).To(BeFalse(), "a missing source is awaited, not a failure")
	g.Expect(testenv.KStatus(t, ta)).To(Equal(status.InProgressStatus))

	cert, key := testpki.CA(t, "pg-ca")
	env.NewSecret(t, ns, "pg-ca", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})
	p := projectionOf(g, ns, "pg")
	g.Expect(p.Data).To(Equal(map[string][]byte{"ca.crt": cert}))
	anchorWith(g, ns, "pg", ready)

	g.Eventually(func() int32 {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(ts), ts)
		return ts.Status.MatchedReleases
	}, 10*time.Second, 100*time.Millisecond).Should(Equal(int32(1)))
}

func TestDeclaredAnchorIsProjectedLikeADiscoveredOne(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "mongo", "mongodb", nil)
	cert, key := testpki.CA(t, "mongo-ca")
	env.NewSecret(t, ns, "mongo-ca-cert", nil, nil, map[string][]byte{"tls.crt": cert, "tls.key": key})
	g.Expect(env.Client.Create(context.Background(), &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: "mongo", Namespace: ns},
		Spec:       trustv1.TrustAnchorSpec{Release: "mongo", Source: trustv1.SecretKeySource{Name: "mongo-ca-cert", Key: "tls.crt"}},
	})).To(Succeed())

	g.Expect(projectionOf(g, ns, "mongo").Data).To(Equal(map[string][]byte{"ca.crt": cert}))
	anchor := anchorWith(g, ns, "mongo", ready)
	g.Expect(anchor.Status.Leg).To(Equal(trustv1.LegDeclared))
	g.Expect(anchor.Status.CABundle).To(Equal(string(cert)), "the certificates, and never the key beside them")
}

func TestRotationOfTheSourcePropagatesByWatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "redis", "redis", nil)
	cert1, _ := testpki.CA(t, "redis-ca-1")
	src := env.NewSecret(t, ns, "redis-ca", testKeys.PublishLabels("redis"), nil, map[string][]byte{"ca.crt": cert1})
	g.Expect(projectionOf(g, ns, "redis").Data["ca.crt"]).To(Equal(cert1))
	first := anchorWith(g, ns, "redis", ready).Status.LastRotationTime

	cert2, _ := testpki.CA(t, "redis-ca-2")
	src.Data["ca.crt"] = cert2
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	g.Eventually(func() []byte {
		return projectionOf(g, ns, "redis").Data["ca.crt"]
	}, 10*time.Second, 50*time.Millisecond).Should(Equal(cert2))
	ta := anchorWith(g, ns, "redis", func(ta *trustv1.TrustAnchor) bool {
		return ready(ta) && len(ta.Status.Certificates) == 1 && ta.Status.Certificates[0].Subject == "CN=redis-ca-2"
	})
	g.Expect(ta.Status.LastRotationTime.Time).NotTo(BeTemporally("<", first.Time))
}

func TestDeletingTheHelmReleaseGarbageCollectsTheProjection(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	hr := env.NewHelmRelease(t, ns, "rabbit", "rabbitmq", nil)
	cert, _ := testpki.CA(t, "rabbit-ca")
	env.NewSecret(t, ns, "rabbit-ca", testKeys.PublishLabels("rabbit"), nil, map[string][]byte{"ca.crt": cert})
	p := projectionOf(g, ns, "rabbit")
	anchorWith(g, ns, "rabbit", ready)

	g.Expect(env.Client.Delete(ctx, hr)).To(Succeed())
	gone(g, &corev1.Secret{}, p.Namespace, p.Name, "kube-controller-manager should collect the projection")
	gone(g, &trustv1.TrustAnchor{}, ns, "rabbit", "the discovered TrustAnchor goes with its release")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rabbit-ca"}, &corev1.Secret{})).To(Succeed(),
		"the source is never owned, never collected")
}

func TestForeignSecretAtTheProjectionNameIsNeverWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	foreign := env.NewSecret(t, ns, "nats.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	env.NewHelmRelease(t, ns, "nats", "nats", nil)
	cert, _ := testpki.CA(t, "nats-ca")
	env.NewSecret(t, ns, "nats-ca", testKeys.PublishLabels("nats"), nil, map[string][]byte{"ca.crt": cert})

	ta := anchorWith(g, ns, "nats", hasReason(trustv1.ProjectionFailedCondition, trustv1.NameCollisionReason))
	g.Expect(conditions.IsReady(ta)).To(BeFalse())
	g.Expect(conditions.IsStalled(ta)).To(BeTrue())
	g.Expect(testenv.KStatus(t, ta)).To(Equal(status.FailedStatus))
	g.Expect(conditions.GetMessage(ta, meta.ReadyCondition)).To(Equal("Secret nats.tenant-ca exists and was not created by credo, "+
		"which never overwrites a Secret it did not create; it is left untouched: delete it for credo to project here"), "the message says why and what to do")
	var got corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(got.Data).To(Equal(foreign.Data))
	g.Expect(warningEvents(g, ns, "nats")).To(ContainElement(trustv1.NameCollisionReason))
}

func TestPrivateKeyInTheLiftedValueKeepsTheExistingProjection(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "es", "elasticsearch", nil)
	cert, key := testpki.CA(t, "es-ca")
	src := env.NewSecret(t, ns, "es-ca", testKeys.PublishLabels("es"), nil, map[string][]byte{"ca.crt": cert})
	g.Expect(projectionOf(g, ns, "es").Data["ca.crt"]).To(Equal(cert))
	anchorWith(g, ns, "es", ready)

	src.Data["ca.crt"] = append(append([]byte{}, cert...), key...)
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	ta := anchorWith(g, ns, "es", hasReason(trustv1.SourceRejectedCondition, trustv1.PrivateKeyDetectedReason))
	g.Expect(conditions.GetReason(ta, meta.ReadyCondition)).To(Equal(trustv1.PrivateKeyDetectedReason))
	g.Expect(projectionOf(g, ns, "es").Data).To(Equal(map[string][]byte{"ca.crt": cert}), "the good projection is kept")
	g.Expect(bytes.Contains([]byte(conditions.GetMessage(ta, trustv1.SourceRejectedCondition)), []byte("PRIVATE"))).To(BeFalse())
	g.Expect(conditions.GetMessage(ta, meta.ReadyCondition)).To(MatchRegexp(
		`^refused Secret es-ca key ca\.crt: a private key marker was found at byte offset \d+, and credo never projects a private key; Secret es\.tenant-ca keeps the certificates projected before$`),
		"the reason is said once, and the kept projection is named")
	g.Expect(warningEvents(g, ns, "es")).To(ContainElement(trustv1.PrivateKeyDetectedReason))

	// Fixing the source recovers without any other action.
	src.Data["ca.crt"] = cert
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	anchorWith(g, ns, "es", func(ta *trustv1.TrustAnchor) bool {
		return ready(ta) && !conditions.Has(ta, trustv1.SourceRejectedCondition)
	})
}

// A source refused before anything was projected says that nothing is,
// not that a projection is kept.
func TestPrivateKeyBeforeAnyProjectionSaysNothingIsProjected(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "os", "opensearch", nil)
	cert, key := testpki.CA(t, "os-ca")
	env.NewSecret(t, ns, "os-ca", testKeys.PublishLabels("os"), nil, map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)})

	ta := anchorWith(g, ns, "os", hasReason(trustv1.SourceRejectedCondition, trustv1.PrivateKeyDetectedReason))
	g.Expect(conditions.GetMessage(ta, meta.ReadyCondition)).To(MatchRegexp(
		`^refused Secret os-ca key ca\.crt: a private key marker was found at byte offset \d+, and credo never projects a private key; nothing is projected until it holds only certificates$`))
	g.Expect(ta.Status.ProjectedSecret).To(BeEmpty())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "os" + trustv1.ProjectionSuffix}, &corev1.Secret{})).
		To(Satisfy(apierrors.IsNotFound), "no projection was written")
}

func TestTwoSourcesClaimingOneReleaseAreAmbiguous(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cert1, _ := testpki.CA(t, "mq-ca-1")
	cert2, _ := testpki.CA(t, "mq-ca-2")
	env.NewSecret(t, ns, "mq-ca-a", testKeys.PublishLabels("mq"), nil, map[string][]byte{"ca.crt": cert1})
	env.NewSecret(t, ns, "mq-ca-b", testKeys.PublishLabels("mq"), nil, map[string][]byte{"ca.crt": cert2})
	env.NewHelmRelease(t, ns, "mq", "rabbitmq", nil)

	ta := anchorWith(g, ns, "mq", hasReason(trustv1.SourceUnavailableCondition, trustv1.AmbiguousSourceReason))
	g.Expect(conditions.GetMessage(ta, trustv1.SourceUnavailableCondition)).To(And(ContainSubstring("mq-ca-a"), ContainSubstring("mq-ca-b")))
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "mq.tenant-ca"}, &corev1.Secret{}))
	}, 2*time.Second, 200*time.Millisecond).Should(BeTrue(), "nothing is projected from an ambiguous claim")
}

func TestWithdrawnLabelKeepsTheProjectionAndSaysSo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	cert, _ := testpki.CA(t, "ch-ca")
	src := env.NewSecret(t, ns, "ch-ca", testKeys.PublishLabels("ch"), nil, map[string][]byte{"ca.crt": cert})
	projectionOf(g, ns, "ch")
	anchorWith(g, ns, "ch", ready)

	delete(src.Labels, testKeys.PublishCACert)
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	anchorWith(g, ns, "ch", hasReason(trustv1.SourceUnavailableCondition, trustv1.SourceWithdrawnReason))
	g.Expect(projectionOf(g, ns, "ch").Data["ca.crt"]).To(Equal(cert))
}

// warningEvents returns the reasons of the Warning events about a TrustAnchor.
func warningEvents(g Gomega, ns, name string) []string {
	var reasons []string
	g.Eventually(func() int {
		var list corev1.EventList
		_ = env.Client.List(context.Background(), &list, client.InNamespace(ns))
		reasons = nil
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == trustv1.TrustAnchorKind && e.InvolvedObject.Name == name && e.Type == corev1.EventTypeWarning {
				reasons = append(reasons, e.Reason)
			}
		}
		return len(reasons)
	}, 10*time.Second, 100*time.Millisecond).ShouldNot(BeZero())
	return reasons
}
