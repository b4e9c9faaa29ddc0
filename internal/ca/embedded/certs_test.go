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

package embedded

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

const testUUID = "0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60"

func mustAuthority(t *testing.T, now time.Time, lifetime time.Duration) *authority {
	t.Helper()
	a, err := newAuthority(now, lifetime, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func signingRequest(pub crypto.PublicKey, nb, na time.Time) ca.SigningRequest {
	return ca.SigningRequest{PublicKey: pub, URI: enrollapi.WorkloadURI(testUUID), NotBefore: nb, NotAfter: na}
}

func TestNewAuthorityIsAPathLenZeroSigningCA(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	a := mustAuthority(t, now, DefaultLifetime)
	c := a.cert
	g.Expect(c.Subject.CommonName).To(Equal("credo enrollment CA"))
	g.Expect(c.IsCA).To(BeTrue())
	g.Expect(c.BasicConstraintsValid).To(BeTrue())
	g.Expect(c.MaxPathLen).To(Equal(0))
	g.Expect(c.MaxPathLenZero).To(BeTrue())
	g.Expect(c.KeyUsage).To(Equal(x509.KeyUsageCertSign | x509.KeyUsageCRLSign))
	g.Expect(c.PublicKey).To(BeAssignableToTypeOf(&ecdsa.PublicKey{}))
	g.Expect(c.PublicKey.(*ecdsa.PublicKey).Curve).To(Equal(elliptic.P256()))
	g.Expect(c.NotAfter.Sub(now)).To(BeNumerically("~", DefaultLifetime, time.Second))
	g.Expect(c.SubjectKeyId).NotTo(BeEmpty())
	g.Expect(c.CheckSignatureFrom(c)).To(Succeed())
	g.Expect(string(a.keyPEM)).To(HavePrefix("-----BEGIN PRIVATE KEY-----"))
}

func TestLeafTemplateTakesOnlyWhatTheRequestAsks(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	issuer := mustAuthority(t, now, 48*time.Hour)
	ecKey := testpki.Key(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)

	tests := []struct {
		name      string
		pub       crypto.PublicKey
		notAfter  time.Time
		wantUsage x509.KeyUsage
		wantEnd   time.Time
	}{
		{"an ECDSA key gets digital signature only", &ecKey.PublicKey, now.Add(24 * time.Hour),
			x509.KeyUsageDigitalSignature, now.Add(24 * time.Hour)},
		{"an RSA key also gets key encipherment", &rsaKey.PublicKey, now.Add(24 * time.Hour),
			x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, now.Add(24 * time.Hour)},
		{"an Ed25519 key gets digital signature only", edPub, now.Add(time.Hour),
			x509.KeyUsageDigitalSignature, now.Add(time.Hour)},
		{"a lifetime beyond the CA's is clamped to the CA's end", &ecKey.PublicKey, now.Add(72 * time.Hour),
			x509.KeyUsageDigitalSignature, issuer.cert.NotAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tmpl, err := leafTemplate(signingRequest(tt.pub, now.Add(-time.Minute), tt.notAfter), issuer.cert)
			g.Expect(err).NotTo(HaveOccurred())
			cert, _, err := issuer.issue(tmpl, tt.pub)
			g.Expect(err).NotTo(HaveOccurred())

			g.Expect(cert.URIs).To(HaveLen(1))
			g.Expect(cert.URIs[0].String()).To(Equal("credo://workload/" + testUUID))
			g.Expect(cert.DNSNames).To(BeEmpty())
			g.Expect(cert.IPAddresses).To(BeEmpty())
			g.Expect(cert.EmailAddresses).To(BeEmpty())
			g.Expect(cert.Subject.CommonName).To(Equal(testUUID))
			g.Expect(cert.Subject.Organization).To(BeEmpty())
			g.Expect(cert.IsCA).To(BeFalse())
			g.Expect(cert.BasicConstraintsValid).To(BeTrue())
			g.Expect(cert.KeyUsage).To(Equal(tt.wantUsage))
			g.Expect(cert.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth))
			g.Expect(cert.NotBefore).To(BeTemporally("==", now.Add(-time.Minute)))
			g.Expect(cert.NotAfter).To(BeTemporally("==", tt.wantEnd.Truncate(time.Second)))
			g.Expect(cert.AuthorityKeyId).To(Equal(issuer.cert.SubjectKeyId))
			g.Expect(cert.SerialNumber.Sign()).To(Equal(1))
			g.Expect(cert.SerialNumber.BitLen()).To(BeNumerically("<=", 128))
			g.Expect(cert.CheckSignatureFrom(issuer.cert)).To(Succeed())
		})
	}
}

func TestLeafTemplateRefusesIncompleteRequests(t *testing.T) {
	now := time.Now()
	issuer := mustAuthority(t, now, time.Hour)
	key := testpki.Key(t)
	tests := []struct {
		name string
		req  ca.SigningRequest
		want string
	}{
		{"a request without a URI", ca.SigningRequest{PublicKey: key.Public(), NotBefore: now, NotAfter: now.Add(time.Minute)}, "no URI"},
		{"a request without a public key", ca.SigningRequest{URI: enrollapi.WorkloadURI(testUUID), NotBefore: now, NotAfter: now.Add(time.Minute)}, "no public key"},
		{"a request that ends before it begins", signingRequest(key.Public(), now, now.Add(-time.Minute)), "before it begins"},
		{"a request that begins after the CA ends", signingRequest(key.Public(), now.Add(2*time.Hour), now.Add(3*time.Hour)), "before it begins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := leafTemplate(tt.req, issuer.cert)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestLeafTemplateLeavesCommonNameEmptyForOtherURIs(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	issuer := mustAuthority(t, now, time.Hour)
	key := testpki.Key(t)
	req := signingRequest(key.Public(), now, now.Add(time.Minute))
	req.URI = &url.URL{Scheme: "spiffe", Host: "example.org", Path: "/ns/a"}
	tmpl, err := leafTemplate(req, issuer.cert)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.Subject.CommonName).To(BeEmpty())
	g.Expect(tmpl.URIs).To(HaveLen(1))
	g.Expect(tmpl.URIs[0].String()).To(Equal("spiffe://example.org/ns/a"))
}

func TestLeafTemplateNamesTheWorkloadInEveryIdentityForm(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	issuer := mustAuthority(t, now, time.Hour)
	for _, form := range []enrollapi.IdentityForm{
		enrollapi.DefaultIdentityForm(),
		{Scheme: enrollapi.SchemeCredo, TrustDomain: "corp.example"},
		{Scheme: enrollapi.SchemeSPIFFE, TrustDomain: "corp.example"},
	} {
		req := signingRequest(testpki.Key(t).Public(), now, now.Add(time.Minute))
		req.URI = form.URI(testUUID)
		tmpl, err := leafTemplate(req, issuer.cert)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tmpl.Subject.CommonName).To(Equal(testUUID), form.String())
		g.Expect(tmpl.URIs).To(HaveLen(1))
		g.Expect(tmpl.URIs[0].String()).To(Equal(form.URI(testUUID).String()))
	}
}

func TestServingTemplateSplitsDNSNamesAndIPs(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	tmpl, err := servingTemplate([]string{"enroll.example.org", "127.0.0.1", "::1"}, now, now.Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.DNSNames).To(Equal([]string{"enroll.example.org"}))
	g.Expect(tmpl.IPAddresses).To(HaveLen(2))
	g.Expect(tmpl.ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}))
	g.Expect(tmpl.URIs).To(BeEmpty())
	_, err = servingTemplate(nil, now, now.Add(time.Hour))
	g.Expect(err).To(HaveOccurred())
}

// rendered returns a Secret holding st, as sync would write it.
func rendered(t *testing.T, st *state, now time.Time) *corev1.Secret {
	t.Helper()
	o := NewOptions()
	o.Namespace = "ns"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: o.SecretName}}
	if err := st.render(s, &o, now); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStateSurvivesARoundTripThroughTheSecret(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	first := mustAuthority(t, now.Add(-2*time.Hour), 24*time.Hour)
	second := mustAuthority(t, now.Add(-time.Hour), 24*time.Hour)
	third := mustAuthority(t, now, 24*time.Hour)
	st := &state{current: first}
	st.rotate(second, now.Add(-time.Hour), 8*time.Hour)
	st.rotate(third, now, 2*time.Hour)

	s := rendered(t, st, now)
	g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(s.Data).To(HaveLen(4))
	g.Expect(s.Data).To(HaveKey(KeyPreviousKeys))
	g.Expect(string(s.Data[KeyBundle])).To(Equal(string(third.certPEM) + string(second.certPEM) + string(first.certPEM)))
	g.Expect(s.Labels).To(BeEmpty(), "published by a TrustAnchor, not by the label leg")
	g.Expect(s.Annotations).NotTo(HaveKey("internal.cozystack.io/publish-ca-cert-key"))

	back, err := parseSecret(s, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.current.fingerprint).To(Equal(third.fingerprint))
	g.Expect(back.previous).To(HaveLen(2))
	g.Expect(back.previous[0].fingerprint).To(Equal(second.fingerprint))
	g.Expect(back.previous[0].trustedUntil).To(BeTemporally("==", now.Add(2*time.Hour)))
	g.Expect(back.previous[1].fingerprint).To(Equal(first.fingerprint))
	g.Expect(back.previous[1].key).NotTo(BeNil())
	g.Expect(servingAuthority(back, now).fingerprint).To(Equal(first.fingerprint))

	again := rendered(t, back, now)
	g.Expect(secretEqual(s, again)).To(BeTrue(), "rendering a parsed Secret changes nothing")
}

func TestPruneDropsPreviousCAsWhoseOverlapEnded(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	old := mustAuthority(t, now.Add(-time.Hour), 24*time.Hour)
	st := &state{current: old}
	st.rotate(mustAuthority(t, now, 24*time.Hour), now, time.Minute)
	g.Expect(st.prune(now.Add(30 * time.Second))).To(BeEmpty())
	g.Expect(st.trusted(now.Add(30 * time.Second))).To(HaveLen(2))
	g.Expect(st.nextEvent()).To(BeTemporally("==", now.Add(time.Minute)))

	g.Expect(st.prune(now.Add(time.Minute))).To(ConsistOf(old))
	g.Expect(st.previous).To(BeEmpty())
	s := rendered(t, st, now.Add(time.Minute))
	g.Expect(s.Data).To(HaveLen(3))
	g.Expect(s.Data).NotTo(HaveKey(KeyPreviousKeys))
	g.Expect(s.Annotations).NotTo(HaveKey(AnnotationBundle))
}

func TestRotateCapsTheOverlapAtTheOldCAsEnd(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	old := mustAuthority(t, now, time.Hour)
	st := &state{current: old}
	st.rotate(mustAuthority(t, now, time.Hour), now, 8*24*time.Hour)
	g.Expect(st.previous[0].trustedUntil).To(Equal(old.cert.NotAfter))
}

func TestDueForRotationAfterTwoThirdsOfTheLifetime(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	a := mustAuthority(t, now, 3*time.Hour)
	life := a.cert.NotAfter.Sub(a.cert.NotBefore)
	g.Expect(dueForRotation(a.cert, a.cert.NotBefore.Add(life/2))).To(BeFalse())
	g.Expect(dueForRotation(a.cert, a.cert.NotBefore.Add(life*2/3+time.Second))).To(BeTrue())
}

func TestParseSecretErrorsNeverQuoteKeyMaterial(t *testing.T) {
	now := time.Now()
	a := mustAuthority(t, now, time.Hour)
	b := mustAuthority(t, now, time.Hour)
	leaf := testpki.Key(t)
	tmpl, _ := leafTemplate(signingRequest(leaf.Public(), now, now.Add(time.Minute)), a.cert)
	_, leafDER, _ := a.issue(tmpl, leaf.Public())
	leafAuth, _ := authorityFromDER(leafDER)

	tests := []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"a key of another CA", map[string][]byte{"tls.crt": a.certPEM, "tls.key": b.keyPEM}, "does not belong"},
		{"a garbled key", map[string][]byte{"tls.crt": a.certPEM, "tls.key": []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")}, "exactly one PEM private key"},
		{"no certificate", map[string][]byte{"tls.key": a.keyPEM}, "exactly one PEM certificate"},
		{"a leaf in place of the CA", map[string][]byte{"tls.crt": leafAuth.certPEM, "tls.key": a.keyPEM}, "not a CA certificate"},
		{"a private key in the bundle", map[string][]byte{"tls.crt": a.certPEM, "tls.key": a.keyPEM, "ca.crt": b.keyPEM}, "unexpected PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := parseSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ca"}, Data: tt.data}, nil)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(err.Error()).NotTo(ContainSubstring("PRIVATE KEY-----"))
			g.Expect(strings.Contains(err.Error(), "MII")).To(BeFalse())
		})
	}
}
