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
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testpki"
)

// platformAnchor declares the TrustAnchor release in ns, owned by itself,
// lifting key of Secret source.
func platformAnchor(g Gomega, ns, release, source string) *trustv1.TrustAnchor {
	ta := &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ns},
		Spec: trustv1.TrustAnchorSpec{
			Release: release,
			Owner:   &trustv1.ProjectionOwner{Kind: trustv1.OwnerTrustAnchor},
			Source:  trustv1.SecretKeySource{Name: source, Key: "ca.crt"},
		},
	}
	g.Expect(env.Client.Create(context.Background(), ta)).To(Succeed())
	return ta
}

// A platform anchor needs no HelmRelease: its projection is owned by the
// TrustAnchor, and deleting the TrustAnchor deletes the projection.
func TestPlatformAnchorIsProjectedWithoutAHelmReleaseAndCollectedWithIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cert, key := testpki.CA(t, "platform-ca")
	env.NewSecret(t, ns, "platform-ca", nil, nil, map[string][]byte{"ca.crt": cert, "tls.key": key})
	ta := platformAnchor(g, ns, "platform", "platform-ca")

	p := projectionOf(g, ns, "platform")
	g.Expect(p.Data).To(Equal(map[string][]byte{"ca.crt": cert}), "ca.crt alone")
	g.Expect(p.OwnerReferences).To(Equal([]metav1.OwnerReference{{
		APIVersion: trustv1.GroupVersion.String(), Kind: trustv1.TrustAnchorKind,
		Name: "platform", UID: ta.UID, BlockOwnerDeletion: ptr.To(false),
	}}))
	ready := anchorWith(g, ns, "platform", ready)
	g.Expect(ready.Status.Leg).To(Equal(trustv1.LegDeclared))
	g.Expect(conditions.Has(ready, trustv1.SourceUnavailableCondition)).To(BeFalse(), "no HelmReleaseNotFound")

	g.Expect(env.Client.Delete(ctx, ta)).To(Succeed())
	gone(g, &corev1.Secret{}, p.Namespace, p.Name, "kube-controller-manager should collect the projection")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "platform-ca"}, &corev1.Secret{})).To(Succeed(),
		"the source is never owned, never collected")
}

// A HelmRelease of the name neither owns a platform anchor's projection
// nor makes it wait; a foreign Secret of the projection's name is never
// written, whoever the owner.
func TestPlatformAnchorIgnoresAHelmReleaseOfTheNameAndNeverWritesAForeignSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "shared", "anything", nil)
	cert, _ := testpki.CA(t, "shared-ca")
	env.NewSecret(t, ns, "shared-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	ta := platformAnchor(g, ns, "shared", "shared-ca")
	g.Expect(projectionOf(g, ns, "shared").OwnerReferences).To(ConsistOf(
		HaveField("UID", ta.UID)), "owned by the TrustAnchor, not the HelmRelease")

	other := env.NewNamespace(t)
	foreign := env.NewSecret(t, other, "shared.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	env.NewSecret(t, other, "shared-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	platformAnchor(g, other, "shared", "shared-ca")
	anchorWith(g, other, "shared", hasReason(trustv1.ProjectionFailedCondition, trustv1.NameCollisionReason))
	var got corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(got.OwnerReferences).To(BeEmpty())
}

// A label on another Secret claiming the release of a platform anchor
// makes it ambiguous, as for any declared anchor.
func TestPlatformAnchorAndALabelOnAnotherSecretAreAmbiguous(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	cert, _ := testpki.CA(t, "one-ca")
	env.NewSecret(t, ns, "one-ca", nil, nil, map[string][]byte{"ca.crt": cert})
	env.NewSecret(t, ns, "two-ca", testKeys.PublishLabels("one"), nil, map[string][]byte{"ca.crt": cert})
	platformAnchor(g, ns, "one", "one-ca")
	anchorWith(g, ns, "one", hasReason(trustv1.SourceUnavailableCondition, trustv1.AmbiguousSourceReason))
}

// The owner is immutable; naming the default explicitly changes nothing.
func TestTheOwnerIsImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	setOwner := func(ta *trustv1.TrustAnchor, kind trustv1.OwnerKind) error {
		patch := client.MergeFrom(ta.DeepCopy())
		ta.Spec.Owner = &trustv1.ProjectionOwner{Kind: kind}
		return env.Client.Patch(ctx, ta, patch)
	}
	ta := platformAnchor(g, ns, "fixed", "fixed-ca")
	err := setOwner(ta, trustv1.OwnerHelmRelease)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("owner is immutable"))

	byDefault := &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec:       trustv1.TrustAnchorSpec{Release: "release", Source: trustv1.SecretKeySource{Name: "release-ca"}},
	}
	g.Expect(env.Client.Create(ctx, byDefault)).To(Succeed())
	g.Expect(setOwner(byDefault, trustv1.OwnerHelmRelease)).To(Succeed(), "the default, named")
	g.Expect(apierrors.IsInvalid(setOwner(byDefault, trustv1.OwnerTrustAnchor))).To(BeTrue())
}
