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
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"time"

	"github.com/credo-dev/credo/internal/ca"
	credopem "github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

const (
	// caCommonName is the subject of every CA this package generates.
	caCommonName = "credo enrollment CA"
	// clockSkew backdates the NotBefore of generated CA and serving certificates.
	clockSkew = 5 * time.Minute
	// maxCommonName is the upper bound of a CommonName (RFC 5280).
	maxCommonName = 64

	pemCertificate = "CERTIFICATE"
	pemPrivateKey  = "PRIVATE KEY"
)

// authority is one CA: its certificate and, when it is known, its key.
type authority struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer // nil when the key is not available
	// keyPEM is the key as the Secret keeps it; nil when the key is in a KeyStore.
	keyPEM []byte
	// keyID is the id of the key in the KeyStore (the certificate's
	// Subject Key Identifier); nil when the key is kept in the Secret.
	keyID       []byte
	fingerprint string
	// trustedUntil is when a previous CA leaves the bundle; zero for the current CA.
	trustedUntil time.Time
}

// newAuthority generates a self-signed CA: ECDSA P-256, MaxPathLen 0, for
// signing certificates only. Its key is generated in keys, when not nil,
// and the id the store gives it is the certificate's Subject Key
// Identifier; otherwise it is generated here and kept as PEM for the
// Secret. A key generated in the store is destroyed again when the
// certificate cannot be made.
func newAuthority(now time.Time, lifetime time.Duration, keys KeyStore) (*authority, error) {
	if keys == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generating the CA key: %w", err)
		}
		a, err := selfSign(key, nil, now, lifetime)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encoding the CA key: %w", err)
		}
		a.keyPEM = pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: keyDER})
		return a, nil
	}
	key, id, err := keys.Generate()
	if err != nil {
		return nil, fmt.Errorf("%w: generating the CA key in the key store: %w", ca.ErrUnavailable, err)
	}
	if len(id) == 0 {
		return nil, errors.New("the key store gave the CA key no id")
	}
	a, err := selfSign(key, id, now, lifetime)
	if err != nil {
		if derr := keys.Destroy(id); derr != nil {
			err = errors.Join(err, fmt.Errorf("destroying the unused key: %w", derr))
		}
		return nil, err
	}
	a.keyID = id
	return a, nil
}

// selfSign makes the CA certificate of key; ski, when not nil, is its
// Subject Key Identifier (otherwise derived from the key).
func selfSign(key crypto.Signer, ski []byte, now time.Time, lifetime time.Duration) (*authority, error) {
	sn, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: caCommonName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(lifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		SubjectKeyId:          ski,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing the CA certificate: %w", err)
	}
	a, err := authorityFromDER(der)
	if err != nil {
		return nil, err
	}
	a.key = key
	return a, nil
}

// authorityFromDER parses a CA certificate, without its key.
func authorityFromDER(der []byte) (*authority, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing a CA certificate: %w", err)
	}
	return authorityOf(cert), nil
}

// authorityOf is the CA of a parsed certificate, without its key.
func authorityOf(cert *x509.Certificate) *authority {
	return &authority{
		cert:        cert,
		certPEM:     pem.EncodeToMemory(&pem.Block{Type: pemCertificate, Bytes: cert.Raw}),
		fingerprint: fingerprint(cert.Raw),
	}
}

// setKey attaches key to a, after checking that it belongs to a's certificate.
func (a *authority) setKey(key crypto.Signer, keyPEM []byte) error {
	if !publicKeysEqual(a.cert.PublicKey, key.Public()) {
		return fmt.Errorf("the key does not belong to CA %s", a.fingerprint)
	}
	a.key, a.keyPEM = key, keyPEM
	return nil
}

// trustedAt says whether a is still in the bundle at now.
func (a *authority) trustedAt(now time.Time) bool {
	if now.After(a.cert.NotAfter) {
		return false
	}
	return a.trustedUntil.IsZero() || now.Before(a.trustedUntil)
}

// dueForRotation says whether now is past two thirds of the lifetime of cert.
func dueForRotation(cert *x509.Certificate, now time.Time) bool {
	return !now.Before(rotationTime(cert))
}

// rotationTime is two thirds into the lifetime of cert.
func rotationTime(cert *x509.Certificate) time.Time {
	life := cert.NotAfter.Sub(cert.NotBefore)
	return cert.NotBefore.Add(life / 3 * 2)
}

// leafTemplate builds a workload certificate from req alone: one URI SAN,
// client and server authentication, the lifetime asked for, clamped to the
// issuer's own. Nothing else of the CSR is used.
func leafTemplate(req ca.SigningRequest, issuer *x509.Certificate) (*x509.Certificate, error) {
	if req.URI == nil || req.URI.String() == "" {
		return nil, errors.New("the signing request has no URI")
	}
	if req.PublicKey == nil {
		return nil, errors.New("the signing request has no public key")
	}
	notAfter := req.NotAfter
	if notAfter.After(issuer.NotAfter) {
		notAfter = issuer.NotAfter
	}
	if !notAfter.After(req.NotBefore) {
		return nil, fmt.Errorf("the certificate would end (%s) before it begins (%s)",
			notAfter.UTC().Format(time.RFC3339), req.NotBefore.UTC().Format(time.RFC3339))
	}
	usage := x509.KeyUsageDigitalSignature
	if _, ok := req.PublicKey.(*rsa.PublicKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	sn, err := serialNumber()
	if err != nil {
		return nil, err
	}
	uri := *req.URI
	var cn string
	// The CN names the workload, in whichever identity form the URI is.
	if _, id, err := enrollapi.FormOf(req.URI); err == nil && len(id) <= maxCommonName {
		cn = id
	}
	return &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             req.NotBefore,
		NotAfter:              notAfter,
		URIs:                  []*url.URL{&uri},
		KeyUsage:              usage,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
	}, nil
}

// servingTemplate builds the enrollment server's own certificate for hosts
// (DNS names or IP addresses).
func servingTemplate(hosts []string, notBefore, notAfter time.Time) (*x509.Certificate, error) {
	if len(hosts) == 0 {
		return nil, errors.New("no host names for the serving certificate")
	}
	sn, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if len(hosts[0]) <= maxCommonName {
		tmpl.Subject.CommonName = hosts[0]
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl, nil
}

// issue signs tmpl for pub with a's key.
func (a *authority) issue(tmpl *x509.Certificate, pub crypto.PublicKey) (*x509.Certificate, []byte, error) {
	if a.key == nil {
		return nil, nil, fmt.Errorf("the key of CA %s is not available", a.fingerprint)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, pub, a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing with CA %s: %w", a.fingerprint, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the signed certificate: %w", err)
	}
	return cert, der, nil
}

// serialNumber returns a random positive 128-bit serial number.
func serialNumber() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("generating a serial number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}

// fingerprint is "sha256:<hex>" of a certificate's DER.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// publicKeysEqual compares two public keys of any supported type.
func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}

// parseCertificates returns the CERTIFICATE blocks of data, refusing any
// other block (pem.Certificates).
func parseCertificates(data []byte) ([]*authority, error) {
	certs, err := credopem.Certificates(data)
	var bad *credopem.CertificateError
	if errors.As(err, &bad) {
		return nil, fmt.Errorf("parsing a CA certificate: %w", bad.Err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*authority, 0, len(certs))
	for _, c := range certs {
		out = append(out, authorityOf(c))
	}
	return out, nil
}

// keyBlock is one parsed private key and its PEM.
type keyBlock struct {
	key crypto.Signer
	pem []byte
}

// parsePrivateKeys returns the private keys of data (PKCS#8, SEC 1 or PKCS#1 PEM).
// Its errors never quote the data.
func parsePrivateKeys(data []byte) ([]keyBlock, error) {
	var out []keyBlock
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out, nil
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case pemPrivateKey:
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			return nil, fmt.Errorf("unexpected PEM block %q where a private key was expected", block.Type)
		}
		if err != nil {
			return nil, errors.New("a private key could not be parsed")
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, errors.New("a private key is not a signing key")
		}
		out = append(out, keyBlock{key: signer, pem: pem.EncodeToMemory(block)})
	}
}
