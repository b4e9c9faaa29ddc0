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

package certmanager

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca/anchor"
	"github.com/credo-dev/credo/internal/ca/certmanager"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/testpki"
)

// With --certificate-authority=cert-manager the issuer's CA is the
// enrollment anchor, with no manual step: the enrollment-controller copies
// the bundle's certificates (and nothing else of the CA Secret) into its
// namespace and declares the TrustAnchor credo lifting them, which the
// trust-controller projects into credo.tenant-ca. When the CA Secret
// rotates, the anchor follows, and agents enroll under the new CA.
func TestTheIssuersCAIsTheEnrollmentAnchorAndFollowsItsRotation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	issuerNS, ns := env.NewNamespace(t), env.NewNamespace(t)
	first := testpki.Authority(t, "cert-manager CA issuer")
	secret := caSecret(issuerNS, "issuer-ca", first)
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	newCAIssuer(g, issuerNS, "ca", "issuer-ca")
	issuerReady(g, issuerNS, "ca")
	c := startController(t, ns, issuerArgs(issuerNS, "ca", "issuer-ca"), func(o *enrollment.ListenerOptions) {
		o.CertManager.RefreshAfter = time.Second
	})

	ta := anchorOf(g, ns, "credo", func(ta *trustv1.TrustAnchor) bool { return conditions.IsReady(ta) })
	g.Expect(ta.Labels).To(HaveKeyWithValue(anchor.Label, "true"))
	g.Expect(ta.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: certmanager.DefaultAnchorSecret, Key: "ca.crt"}))
	g.Expect(ta.GetOwnerKind()).To(Equal(trustv1.OwnerTrustAnchor))
	var mirror corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: certmanager.DefaultAnchorSecret}, &mirror)).To(Succeed())
	g.Expect(mirror.Data).To(Equal(map[string][]byte{"ca.crt": first.CertPEM()}), "the CA certificate alone, never the CA's key")
	g.Eventually(func() []byte { return projected(g, ns, "credo") }, 20*time.Second, 100*time.Millisecond).
		Should(Equal(first.CertPEM()), "credo.tenant-ca holds the issuer's CA")

	second := testpki.Authority(t, "cert-manager CA issuer, rotated")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data = caSecret(issuerNS, "issuer-ca", second).Data
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Eventually(func() []byte { return projected(g, ns, "credo") }, time.Minute, 200*time.Millisecond).
		Should(Equal(second.CertPEM()), "the anchor follows the rotation")

	agent, err := enrolldriver.NewAgent(c.roots)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(agent.Enroll(c.base, newToken(t, ns))).To(Succeed())
	verifiesAgainst(g, leafOf(g, agent), second)
}

// An install that switches from the embedded CA to cert-manager keeps its
// TrustAnchor: the one the embedded CA declared takes the mirror of the
// issuer's bundle as its new source, and credo.tenant-ca follows, with no
// withdrawal in between.
func TestSwitchingFromTheEmbeddedCAMovesItsAnchorToTheIssuersCA(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	issuer := testpki.Authority(t, "cert-manager CA issuer")
	g.Expect(env.Client.Create(ctx, caSecret(ns, "issuer-ca", issuer))).To(Succeed())
	newCAIssuer(g, ns, "ca", "issuer-ca")
	issuerReady(g, ns, "ca")

	before := startController(t, ns, []string{"--certificate-authority=" + enrollment.AuthorityEmbedded}, nil)
	declared := anchorOf(g, ns, "credo", func(ta *trustv1.TrustAnchor) bool {
		return conditions.IsReady(ta) && ta.Spec.Source.Name == embedded.DefaultSecretName
	})
	var embeddedCA corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: embedded.DefaultSecretName}, &embeddedCA)).To(Succeed())
	g.Eventually(func() []byte { return projected(g, ns, "credo") }, 20*time.Second, 100*time.Millisecond).
		Should(Equal(embeddedCA.Data["ca.crt"]), "credo.tenant-ca holds the embedded CA")
	before.stop()

	startController(t, ns, issuerArgs(ns, "ca", "issuer-ca"), nil)
	switched := anchorOf(g, ns, "credo", func(ta *trustv1.TrustAnchor) bool {
		return conditions.IsReady(ta) && ta.Spec.Source.Name == certmanager.DefaultAnchorSecret
	})
	g.Expect(switched.UID).To(Equal(declared.UID), "the same TrustAnchor, never withdrawn")
	g.Expect(switched.Spec.Source).To(Equal(trustv1.SecretKeySource{Name: certmanager.DefaultAnchorSecret, Key: certmanager.MirrorKey}))
	g.Eventually(func() []byte { return projected(g, ns, "credo") }, 20*time.Second, 100*time.Millisecond).
		Should(Equal(issuer.CertPEM()), "credo.tenant-ca holds the issuer's CA")
}

// A rotation of the issuer's CA between two reads of the bundle (cached
// for its refresh period) refuses nothing: a certificate of the new CA
// that does not verify against the bundle read before is checked against
// the bundle read again.
func TestARotationWithinTheBundlesRefreshPeriodRefusesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	first := testpki.Authority(t, "cert-manager CA issuer")
	secret := caSecret(ns, "issuer-ca", first)
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	newCAIssuer(g, ns, "ca", "issuer-ca")
	issuerReady(g, ns, "ca")
	c := startController(t, ns, issuerArgs(ns, "ca", "issuer-ca"), func(o *enrollment.ListenerOptions) {
		o.CertManager.RefreshAfter = time.Hour
	})
	token := newToken(t, ns)
	agent, err := enrolldriver.NewAgent(c.roots)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(agent.Enroll(c.base, token)).To(Succeed(), "the bundle is read and cached")
	verifiesAgainst(g, leafOf(g, agent), first)

	second := testpki.Authority(t, "cert-manager CA issuer, rotated")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data = caSecret(ns, "issuer-ca", second).Data
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	// cert-manager signs with the new CA once its informer has the Secret:
	// every renewal until then and after succeeds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		g.Expect(agent.Renew(c.base)).To(Succeed())
		if leafOf(g, agent).CheckSignatureFrom(second.Cert) == nil {
			break
		}
		g.Expect(time.Now().Before(deadline)).To(BeTrue(), "cert-manager signs with the rotated CA")
		time.Sleep(200 * time.Millisecond)
	}
	verifiesAgainst(g, leafOf(g, agent), second)
}

// anchorOf waits until the TrustAnchor ns/release matches.
func anchorOf(g Gomega, ns, release string, match func(*trustv1.TrustAnchor) bool) *trustv1.TrustAnchor {
	var ta trustv1.TrustAnchor
	g.Eventually(func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta); err != nil {
			return false
		}
		return match(&ta)
	}, time.Minute, 100*time.Millisecond).Should(BeTrue(), "TrustAnchor %s/%s conditions: %+v", ns, release, &ta.Status.Conditions)
	return &ta
}

// projected is ca.crt of the projection of release in ns, nil while absent.
func projected(g Gomega, ns, release string) []byte {
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: trustv1.ProjectionName(release)}, &s); err != nil {
		return nil
	}
	return s.Data["ca.crt"]
}
