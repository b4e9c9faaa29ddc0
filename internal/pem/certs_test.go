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

package pem_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	stdpem "encoding/pem"
	"strings"
	"sync"
	"time"

	"github.com/credo-dev/credo/tests/testpki"
)

// fixture holds certificates and keys generated once per test binary.
type fixture struct {
	now time.Time

	root, intermediate, leaf *x509.Certificate
	expired, expiring        *x509.Certificate
	noCertSign, noKeyUsage   *x509.Certificate
	notCA                    *x509.Certificate // a CA-looking cert without basic constraints

	rootPEM, intermediatePEM, leafPEM []byte

	ecKey      *ecdsa.PrivateKey
	rsaKey     *rsa.PrivateKey
	ed25519Key ed25519.PrivateKey
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
)

// fixtures returns the shared fixture, generating it on first use. It panics
// on failure so that it can also be used while setting up the fuzz corpus.
func fixtures() *fixture {
	fixtureOnce.Do(func() { fixtureVal = newFixture() })
	return fixtureVal
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func newECKey() *ecdsa.PrivateKey {
	return must(testpki.NewKey())
}

type certSpec struct {
	cn                  string
	ca, basicConstraint bool
	keyUsage            x509.KeyUsage
	notBefore, notAfter time.Time
}

// issue makes the certificate of spec for key, signed by parent with
// parentKey, or self-signed when parent is nil.
func issue(spec certSpec, key crypto.Signer, parent *x509.Certificate, parentKey crypto.Signer) *x509.Certificate {
	opts := []testpki.Option{
		testpki.WithKey(key),
		testpki.Subject(pkix.Name{CommonName: spec.cn, Organization: []string{"credo tests"}}),
		testpki.Validity(spec.notBefore, spec.notAfter),
		testpki.Template(func(c *x509.Certificate) {
			c.IsCA, c.BasicConstraintsValid, c.KeyUsage, c.ExtKeyUsage = spec.ca, spec.basicConstraint, spec.keyUsage, nil
		}),
	}
	if parent == nil {
		return must(testpki.NewSelfSigned(opts...)).Cert
	}
	return must((&testpki.Cert{Cert: parent, Key: parentKey}).NewLeaf(opts...)).Cert
}

func newFixture() *fixture {
	now := time.Now().UTC().Truncate(time.Second)
	year := 365 * 24 * time.Hour
	caUsage := x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	f := &fixture{now: now, ecKey: newECKey(), rsaKey: rsaKey()}
	_, f.ed25519Key = must2(ed25519.GenerateKey(rand.Reader))

	rootKey, interKey := newECKey(), newECKey()
	f.root = issue(certSpec{cn: "credo test root", ca: true, basicConstraint: true, keyUsage: caUsage,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(10 * year)}, rootKey, nil, nil)
	f.intermediate = issue(certSpec{cn: "credo test intermediate", ca: true, basicConstraint: true, keyUsage: caUsage,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(5 * year)}, interKey, f.root, rootKey)
	f.leaf = issue(certSpec{cn: "credo test leaf", keyUsage: x509.KeyUsageDigitalSignature,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(year)}, newECKey(), f.intermediate, interKey)
	f.expired = issue(certSpec{cn: "credo expired ca", ca: true, basicConstraint: true, keyUsage: caUsage,
		notBefore: now.Add(-48 * time.Hour), notAfter: now.Add(-24 * time.Hour)}, newECKey(), nil, nil)
	f.expiring = issue(certSpec{cn: "credo expiring ca", ca: true, basicConstraint: true, keyUsage: caUsage,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(time.Hour)}, newECKey(), nil, nil)
	f.noCertSign = issue(certSpec{cn: "credo ca without certsign", ca: true, basicConstraint: true,
		keyUsage: x509.KeyUsageDigitalSignature, notBefore: now.Add(-time.Hour), notAfter: now.Add(year)}, newECKey(), nil, nil)
	f.noKeyUsage = issue(certSpec{cn: "credo ca without key usage", ca: true, basicConstraint: true,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(year)}, newECKey(), nil, nil)
	f.notCA = issue(certSpec{cn: "credo no basic constraints", keyUsage: caUsage,
		notBefore: now.Add(-time.Hour), notAfter: now.Add(year)}, newECKey(), nil, nil)

	f.rootPEM = certPEM(f.root)
	f.intermediatePEM = certPEM(f.intermediate)
	f.leafPEM = certPEM(f.leaf)
	return f
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

var (
	rsaOnce sync.Once
	rsaVal  *rsa.PrivateKey
)

// rsaKey returns the one RSA key of the test binary; 2048-bit generation is
// slow, so it happens once.
func rsaKey() *rsa.PrivateKey {
	rsaOnce.Do(func() { rsaVal = must(rsa.GenerateKey(rand.Reader, 2048)) })
	return rsaVal
}

func certPEM(cert *x509.Certificate) []byte {
	return pemBlock("CERTIFICATE", cert.Raw)
}

func pemBlock(typ string, der []byte) []byte {
	return stdpem.EncodeToMemory(&stdpem.Block{Type: typ, Bytes: der})
}

func join(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

func crlf(b []byte) []byte {
	return []byte(strings.ReplaceAll(string(b), "\n", "\r\n"))
}

// Keys in their usual PEM encodings.

func (f *fixture) pkcs1PEM() []byte {
	return pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(f.rsaKey))
}
func (f *fixture) pkcs8DER() []byte { return must(x509.MarshalPKCS8PrivateKey(f.ecKey)) }
func (f *fixture) pkcs8PEM() []byte { return pemBlock("PRIVATE KEY", f.pkcs8DER()) }
func (f *fixture) sec1DER() []byte  { return must(x509.MarshalECPrivateKey(f.ecKey)) }
func (f *fixture) sec1PEM() []byte  { return pemBlock("EC PRIVATE KEY", f.sec1DER()) }
func (f *fixture) ed25519PKCS8PEM() []byte {
	return pemBlock("PRIVATE KEY", must(x509.MarshalPKCS8PrivateKey(f.ed25519Key)))
}

// encryptedPKCS8DER is shaped like an EncryptedPrivateKeyInfo (PBES2); the
// ciphertext is the PKCS#8 key itself, which is fine for a refusal test.
func (f *fixture) encryptedPKCS8DER() []byte {
	return must(asn1.Marshal(struct {
		Algo pkix.AlgorithmIdentifier
		Data []byte
	}{pkix.AlgorithmIdentifier{Algorithm: []int{1, 2, 840, 113549, 1, 5, 13}}, f.pkcs8DER()}))
}

func (f *fixture) opensshPEM() []byte {
	return pemBlock("OPENSSH PRIVATE KEY", append([]byte("openssh-key-v1\x00"), f.ed25519Key...))
}

func (f *fixture) pgpBlock() []byte {
	return []byte("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXJ0cEBCADKq2bqpZ3rcsuL2m1lOsjp0p9ekUXU\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n")
}

// bundleOf concatenates the canonical PEM of n copies of the root.
func (f *fixture) bundleOf(n int) []byte {
	return bytes.Repeat(f.rootPEM, n)
}
