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

// Package testpki builds the certificates and keys tests need: one place
// for every test CA, intermediate, leaf, serving certificate and key. The
// builders return errors (for harness code and fixtures that run outside a
// test); the functions of must.go fail the test instead.
//
// Every builder starts from a default template and applies its options in
// order, so that Template, given last, has the final word:
//
//	root, _ := testpki.NewCA("root")
//	leaf, _ := root.NewLeaf(testpki.URIs(uri), testpki.Validity(from, to))
package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"time"
)

// Cert is a certificate and, unless it was issued for a public key alone,
// its private key.
type Cert struct {
	// Cert is the parsed certificate; Cert.Raw its DER.
	Cert *x509.Certificate
	// Key is the certificate's private key; nil when PublicKey chose the key.
	Key crypto.Signer
}

// CertPEM is the certificate, PEM encoded.
func (c *Cert) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
}

// KeyPEM is the private key, PEM encoded: SEC 1 ("EC PRIVATE KEY") for an
// ECDSA key, PKCS #8 otherwise.
func (c *Cert) KeyPEM() ([]byte, error) {
	if k, ok := c.Key.(*ecdsa.PrivateKey); ok {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	}
	return c.PKCS8PEM()
}

// PKCS8PEM is the private key, PKCS #8 ("PRIVATE KEY") PEM encoded.
func (c *Cert) PKCS8PEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// TLS is the certificate and its key for a tls.Config.
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Option changes the certificate a builder makes.
type Option func(*spec)

// spec is what a builder signs: the template and the subject's key.
type spec struct {
	tmpl *x509.Certificate
	key  crypto.Signer
	pub  crypto.PublicKey
}

// Serial sets the serial number; by default it is random.
func Serial(n int64) Option {
	return func(s *spec) { s.tmpl.SerialNumber = big.NewInt(n) }
}

// Validity sets the validity period.
func Validity(notBefore, notAfter time.Time) Option {
	return func(s *spec) { s.tmpl.NotBefore, s.tmpl.NotAfter = notBefore, notAfter }
}

// NotAfter sets the expiry.
func NotAfter(t time.Time) Option {
	return func(s *spec) { s.tmpl.NotAfter = t }
}

// KeyUsage sets the key usage.
func KeyUsage(u x509.KeyUsage) Option {
	return func(s *spec) { s.tmpl.KeyUsage = u }
}

// ExtKeyUsage sets the extended key usages.
func ExtKeyUsage(u ...x509.ExtKeyUsage) Option {
	return func(s *spec) { s.tmpl.ExtKeyUsage = u }
}

// Subject sets the subject.
func Subject(n pkix.Name) Option {
	return func(s *spec) { s.tmpl.Subject = n }
}

// URIs sets the URI subject alternative names.
func URIs(u ...*url.URL) Option {
	return func(s *spec) { s.tmpl.URIs = u }
}

// Serving makes a server certificate for 127.0.0.1, as a test listener on
// loopback presents.
func Serving() Option {
	return func(s *spec) {
		s.tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		s.tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		s.tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
}

// WithKey makes the certificate for key instead of a fresh ECDSA P-256 key.
func WithKey(key crypto.Signer) Option {
	return func(s *spec) { s.key = key }
}

// PublicKey issues the certificate for pub, whose private key the test
// does not hold (a CSR's key); the Cert's Key is then nil.
func PublicKey(pub crypto.PublicKey) Option {
	return func(s *spec) { s.pub = pub }
}

// Template changes the template in any other way.
func Template(mutate func(*x509.Certificate)) Option {
	return func(s *spec) { mutate(s.tmpl) }
}

// NewKey returns a fresh ECDSA P-256 key, the key every builder makes.
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// NewCA returns a self-signed CA named cn, valid from an hour ago for a
// year, allowed to sign certificates and CRLs.
func NewCA(cn string, opts ...Option) (*Cert, error) {
	return build(caTemplate(cn), nil, opts)
}

// NewIntermediate returns a CA named cn signed by ca, with NewCA's defaults.
func (c *Cert) NewIntermediate(cn string, opts ...Option) (*Cert, error) {
	return build(caTemplate(cn), c, opts)
}

// NewLeaf returns a certificate signed by ca, valid from an hour ago for a
// day, for digital signatures by clients and servers.
func (c *Cert) NewLeaf(opts ...Option) (*Cert, error) {
	return build(leafTemplate(), c, opts)
}

// NewSelfSigned returns a leaf certificate (NewLeaf's defaults) signed by
// its own key: right names, no trusted issuer.
func NewSelfSigned(opts ...Option) (*Cert, error) {
	return build(leafTemplate(), nil, opts)
}

func caTemplate(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
}

func leafTemplate() *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
}

// build signs tmpl, changed by opts, with parent's key, or with its own key
// when parent is nil.
func build(tmpl *x509.Certificate, parent *Cert, opts []Option) (*Cert, error) {
	s := &spec{tmpl: tmpl}
	for _, o := range opts {
		o(s)
	}
	if s.tmpl.SerialNumber == nil {
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
		if err != nil {
			return nil, err
		}
		s.tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
	}
	if s.key == nil && s.pub == nil {
		key, err := NewKey()
		if err != nil {
			return nil, fmt.Errorf("generating a key: %w", err)
		}
		s.key = key
	}
	pub := s.pub
	if pub == nil {
		pub = s.key.Public()
	}
	issuer, signer := s.tmpl, s.key
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, s.tmpl, issuer, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("creating the certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if s.pub != nil {
		return &Cert{Cert: cert}, nil
	}
	return &Cert{Cert: cert, Key: s.key}, nil
}
