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

package signing_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	stdpem "encoding/pem"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/credo-dev/credo/internal/publish/signing"
)

const repository = "ghcr.io/credo-dev/credo"

var signed = v1.Hash{Algorithm: "sha256", Hex: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}

func newSigner(g Gomega) *signing.Signer {
	key, err := signing.GenerateKey()
	g.Expect(err).NotTo(HaveOccurred())
	s, err := signing.NewSigner(key, nil)
	g.Expect(err).NotTo(HaveOccurred())
	return s
}

// signatureOf reads a signature image as cosign does: the simple-signing
// payload (the one layer) and its signature (the layer's annotation).
func signatureOf(g Gomega, sig v1.Image) (body, raw []byte) {
	manifest, err := sig.Manifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.Layers).To(HaveLen(1))
	g.Expect(manifest.Layers[0].MediaType).To(Equal(signing.SimpleSigningMediaType))
	raw, err = base64.StdEncoding.DecodeString(manifest.Layers[0].Annotations[signing.SignatureAnnotation])
	g.Expect(err).NotTo(HaveOccurred())
	layers, err := sig.Layers()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := layers[0].Uncompressed()
	g.Expect(err).NotTo(HaveOccurred())
	defer rc.Close()
	body, err = io.ReadAll(rc)
	g.Expect(err).NotTo(HaveOccurred())
	return body, raw
}

func verifier(g Gomega, publicKeyPEM []byte) signature.Verifier {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(publicKeyPEM)
	g.Expect(err).NotTo(HaveOccurred())
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	g.Expect(err).NotTo(HaveOccurred())
	return v
}

func TestSignatureVerifiesWithTheSignersPublicKey(t *testing.T) {
	g := NewWithT(t)
	s := newSigner(g)
	sig, err := s.Sign(repository, signed)
	g.Expect(err).NotTo(HaveOccurred())
	body, raw := signatureOf(g, sig)

	pub, err := s.PublicKeyPEM()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(verifier(g, pub).VerifySignature(bytes.NewReader(raw), bytes.NewReader(body))).To(Succeed())

	var simple payload.SimpleContainerImage
	g.Expect(json.Unmarshal(body, &simple)).To(Succeed())
	g.Expect(simple.Critical.Type).To(Equal(payload.CosignSignatureType))
	g.Expect(simple.Critical.Image.DockerManifestDigest).To(Equal(signed.String()))
	g.Expect(simple.Critical.Identity.DockerReference).To(Equal(repository))

	otherPub, err := newSigner(g).PublicKeyPEM()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(verifier(g, otherPub).VerifySignature(bytes.NewReader(raw), bytes.NewReader(body))).NotTo(Succeed(),
		"another key does not verify the signature")
	tampered := bytes.Replace(body, []byte(signed.Hex), []byte("f"+signed.Hex[1:]), 1)
	g.Expect(verifier(g, pub).VerifySignature(bytes.NewReader(raw), bytes.NewReader(tampered))).NotTo(Succeed(),
		"the signature covers the digest")
}

func TestSignIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	s := newSigner(g)
	first, err := s.Sign(repository, signed)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := first.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	second, err := s.Sign(repository, signed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.Digest()).To(Equal(want))

	other, err := s.Sign(repository, v1.Hash{Algorithm: "sha256", Hex: "f" + signed.Hex[1:]})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(other.Digest()).NotTo(Equal(want))
}

func TestNewSigner(t *testing.T) {
	g := NewWithT(t)
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	pkcs8 := func(key crypto.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		g.Expect(err).NotTo(HaveOccurred())
		return stdpem.EncodeToMemory(&stdpem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	sec1, err := x509.MarshalECPrivateKey(p256)
	g.Expect(err).NotTo(HaveOccurred())
	password := []byte("correct horse battery staple")
	encrypted, encryptedPub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
	g.Expect(err).NotTo(HaveOccurred())
	p256Pub, err := cryptoutils.MarshalPublicKeyToPEM(p256.Public())
	g.Expect(err).NotTo(HaveOccurred())

	for _, tc := range []struct {
		name     string
		key      []byte
		password []byte
		pub      []byte // the public key the signer has
		errMsg   string
	}{
		{name: "a PKCS#8 P-256 key", key: pkcs8(p256), pub: p256Pub},
		{name: "a SEC 1 P-256 key", key: stdpem.EncodeToMemory(&stdpem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), pub: p256Pub},
		{name: "an encrypted key cosign's library made, with its password", key: encrypted, password: password, pub: encryptedPub},
		{name: "an encrypted key with the wrong password", key: encrypted, password: []byte("wrong"), errMsg: "reading the signing key"},
		{name: "an RSA key", key: pkcs8(rsaKey), errMsg: "a *rsa.PrivateKey, not an ECDSA P-256 key"},
		{name: "a P-384 key", key: pkcs8(p384), errMsg: "ECDSA P-384, not an ECDSA P-256 key"},
		{name: "no PEM", key: []byte("not a key"), errMsg: "reading the signing key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s, err := signing.NewSigner(tc.key, tc.password)
			if tc.errMsg != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.PublicKeyPEM()).To(Equal(tc.pub))
			sig, err := s.Sign(repository, signed)
			g.Expect(err).NotTo(HaveOccurred())
			body, raw := signatureOf(g, sig)
			g.Expect(verifier(g, tc.pub).VerifySignature(bytes.NewReader(raw), bytes.NewReader(body))).To(Succeed())
		})
	}
}

func TestTags(t *testing.T) {
	g := NewWithT(t)
	g.Expect(signing.Tag(signed)).To(Equal("sha256-" + signed.Hex + ".sig"))
	g.Expect(signing.TagFor(signed, "sbom")).To(Equal("sha256-" + signed.Hex + ".sbom"))
}
