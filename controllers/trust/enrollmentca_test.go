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
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	enrollment "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/tests/testenv"
)

// The enrollment-controller's embedded CA, built by the constructor
// cmd/enrollment-controller uses, publishes itself with no HelmRelease
// anywhere: the real trust-controller of this suite projects
// <release>.tenant-ca, ca.crt alone, owned by the TrustAnchor, and garbage
// collection removes it with the TrustAnchor.
func TestEnrollmentCAIsPublishedWithoutAHelmRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	stop := startEnrollmentCA(t, caOptions(ns, "credo"))
	defer stop()

	ta := anchorWith(g, ns, "credo", ready)
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegDeclared))
	g.Expect(ta.GetOwnerKind()).To(Equal(trustv1.OwnerTrustAnchor))
	g.Expect(ta.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: embedded.DefaultSecretName, Key: "ca.crt"}))
	g.Expect(ta.Labels).To(HaveKeyWithValue(embedded.LabelAnchor, "true"))
	var hrs metav1.PartialObjectMetadataList
	hrs.SetGroupVersionKind(helmv2.GroupVersion.WithKind("HelmReleaseList"))
	g.Expect(env.Client.List(ctx, &hrs, client.InNamespace(ns))).To(Succeed())
	g.Expect(hrs.Items).To(BeEmpty(), "no HelmRelease is involved")

	caSecret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: embedded.DefaultSecretName}, caSecret)).To(Succeed())
	g.Expect(caSecret.Labels).NotTo(HaveKey(testKeys.PublishCACert), "no second claim on the label leg")
	g.Expect(caSecret.Labels).NotTo(HaveKey(testKeys.Release))
	p := projectionOf(g, ns, "credo")
	g.Expect(p.Data).To(Equal(map[string][]byte{"ca.crt": caSecret.Data["ca.crt"]}), "ca.crt alone: never the CA key")
	g.Expect(p.OwnerReferences).To(Equal([]metav1.OwnerReference{{
		APIVersion: trustv1.GroupVersion.String(), Kind: trustv1.TrustAnchorKind,
		Name: "credo", UID: ta.UID, BlockOwnerDeletion: ptr.To(false),
	}}))

	g.Expect(env.Client.Delete(ctx, ta)).To(Succeed())
	gone(g, &corev1.Secret{}, p.Namespace, p.Name, "kube-controller-manager should collect the projection with its owner")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(caSecret), &corev1.Secret{})).To(Succeed(), "the CA Secret is never owned")
}

// Renamed (--enrollment-ca-release), the anchor moves: the one declared
// under the old name is deleted, its projection with it. (Signing with
// cert-manager instead moves it to the issuer's CA: tests/certmanager.)
func TestEnrollmentCAAnchorFollowsTheReleaseName(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	stop := startEnrollmentCA(t, caOptions(ns, "credo"))
	old := projectionOf(g, ns, "credo")
	stop()

	stop = startEnrollmentCA(t, caOptions(ns, "platform"))
	defer stop()
	anchorWith(g, ns, "platform", ready)
	renamed := projectionOf(g, ns, "platform")
	g.Expect(renamed.Data).To(Equal(old.Data), "the same CA")
	gone(g, &trustv1.TrustAnchor{}, ns, "credo")
	gone(g, &corev1.Secret{}, ns, "credo.tenant-ca")
}

// A Secret credo.tenant-ca credo did not write is never overwritten, nor
// a TrustAnchor credo the enrollment-controller did not declare.
func TestEnrollmentCANeverWritesAForeignSecretOrTrustAnchor(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	foreign := env.NewSecret(t, ns, "credo.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	stop := startEnrollmentCA(t, caOptions(ns, "credo"))
	anchorWith(g, ns, "credo", hasReason(trustv1.ProjectionFailedCondition, trustv1.NameCollisionReason))
	var got corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(foreign.ResourceVersion))
	stop()

	other := env.NewNamespace(t)
	theirs := &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: "credo", Namespace: other},
		Spec:       trustv1.TrustAnchorSpec{Release: "credo", Source: trustv1.SecretKeySource{Name: "their-ca"}},
	}
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	stop = startEnrollmentCA(t, caOptions(other, "credo"))
	defer stop()
	g.Eventually(func() bool {
		return strings.Contains(env.Logs.String(), "TrustAnchor "+other+"/credo: "+embedded.ErrForeignAnchor.Error())
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "the refusal is logged")
	var ta trustv1.TrustAnchor
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), &ta)).To(Succeed())
	g.Expect(ta.Spec).To(Equal(trustv1.TrustAnchorSpec{Release: "credo", Source: trustv1.SecretKeySource{Name: "their-ca", Key: "ca.crt"},
		Interval: ta.Spec.Interval}), "left as it was declared")
	g.Expect(ta.Labels).NotTo(HaveKey(embedded.LabelAnchor))
}

// An install of an earlier version published the CA on the label leg, for
// its HelmRelease: the labels are removed from the CA Secret and the
// discovered TrustAnchor is replaced by the declared one, which takes the
// projection over.
func TestEnrollmentCAReplacesTheLabelLegAnchorOfAnEarlierVersion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	opts := caOptions(ns, "credo")
	earlier, err := embedded.New(opts, env.Client, nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(earlier.Reconcile(ctx)).To(Succeed())
	caSecret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: opts.SecretName}, caSecret)).To(Succeed())
	caSecret.Labels = testKeys.PublishLabels("credo")
	metav1.SetMetaDataAnnotation(&caSecret.ObjectMeta, testKeys.Key, "ca.crt")
	g.Expect(env.Client.Update(ctx, caSecret)).To(Succeed())
	env.NewHelmRelease(t, ns, "credo", "credo", nil)
	discovered := anchorWith(g, ns, "credo", ready)
	g.Expect(discovered.Status.Leg).To(Equal(trustv1.LegLabel))

	stop := startEnrollmentCA(t, opts)
	defer stop()
	declared := anchorWith(g, ns, "credo", func(ta *trustv1.TrustAnchor) bool {
		return ta.UID != discovered.UID && ready(ta)
	})
	g.Expect(declared.Status.Leg).To(Equal(trustv1.LegDeclared))
	g.Expect(declared.OwnerReferences).To(BeEmpty())
	g.Eventually(func() []metav1.OwnerReference {
		return projectionOf(g, ns, "credo").OwnerReferences
	}, 20*time.Second, 100*time.Millisecond).Should(ConsistOf(HaveField("UID", declared.UID)), "the projection is the declared anchor's")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(caSecret), caSecret)).To(Succeed())
	g.Expect(caSecret.Labels).NotTo(HaveKey(testKeys.PublishCACert))
	g.Expect(caSecret.Annotations).NotTo(HaveKey(testKeys.Key))
}

// caOptions are the embedded CA's defaults in ns, published as release.
func caOptions(ns, release string) embedded.Options {
	opts := embedded.NewOptions()
	opts.Namespace = ns
	opts.Release = release
	opts.LabelDomain = testDomain
	return opts
}

// startEnrollmentCA runs the embedded CA as cmd/enrollment-controller
// builds it, on a manager of its own (the enrollment-controller's scheme
// and cache), publishing its anchor. stop stops it.
func startEnrollmentCA(t *testing.T, opts embedded.Options) (stop func()) {
	t.Helper()
	setup, err := testenv.NewSetup(env.Config, enrollment.NewScheme(), enrollment.ControllerName, enrollment.ConfigureCache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = enrollment.NewEmbeddedCA(setup, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := setup.Manager.Start(ctx); err != nil {
			t.Errorf("the enrollment-controller's manager: %v", err)
		}
	}()
	return func() { cancel(); <-done }
}
