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
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	credopem "github.com/credo-dev/credo/internal/pem"
)

// oidSubjectAltName is the subjectAltName extension.
var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

// tagURI is the context-specific tag of a uniformResourceIdentifier GeneralName.
const tagURI = 6

// ErrRefused wraps the refusals of an issued certificate: the issuer signed
// something other than what was asked. It is not ErrUnavailable: asking
// again gets the same answer.
var ErrRefused = errors.New("the issued certificate was refused")

// errUnverified is the refusal of a certificate that does not chain to the
// trust bundle.
var errUnverified = errors.New("it does not verify against the trust bundle for client authentication")

// issued is what the issuer returned, parsed.
type issued struct {
	leaf     *x509.Certificate
	leafPEM  []byte
	chain    []*x509.Certificate
	chainPEM []byte
}

// parseIssued splits status.certificate (leaf, then intermediates) and
// status.ca into the leaf and the chain between it and a bundle root:
// certificates that are bundle roots are left out.
func parseIssued(certificate, caPEM []byte, roots []*x509.Certificate) (*issued, error) {
	certs, err := parseCerts(certificate)
	if err != nil {
		return nil, fmt.Errorf("status.certificate: %w", err)
	}
	if len(certs) == 0 {
		return nil, errors.New("status.certificate holds no certificate")
	}
	extra, err := parseCerts(caPEM)
	if err != nil {
		return nil, fmt.Errorf("status.ca: %w", err)
	}
	out := &issued{leaf: certs[0], leafPEM: encodeCert(certs[0])}
	var buf bytes.Buffer
	for _, c := range append(certs[1:], extra...) {
		if isAmong(c, roots) || isAmong(c, out.chain) {
			continue
		}
		out.chain = append(out.chain, c)
		buf.Write(encodeCert(c))
	}
	out.chainPEM = buf.Bytes()
	return out, nil
}

// check refuses a certificate that does not carry pub, or carries any SAN
// but uri, or is a CA, or does not verify against the bundle (through the
// chain) for client authentication.
func (i *issued) check(pub crypto.PublicKey, uri *url.URL, roots []*x509.Certificate, now time.Time) error {
	leaf := i.leaf
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !eq.Equal(leaf.PublicKey) {
		return fmt.Errorf("%w: its public key is not the CSR's", ErrRefused)
	}
	if err := onlyURISAN(leaf, uri); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if leaf.IsCA {
		return fmt.Errorf("%w: it is a CA certificate", ErrRefused)
	}
	if len(roots) == 0 {
		return fmt.Errorf("%w: the trust bundle is empty, nothing to verify it against", ErrRefused)
	}
	pool, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	for _, c := range i.chain {
		inter.AddCert(c)
	}
	at := now
	if at.Before(leaf.NotBefore) {
		at = leaf.NotBefore
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrRefused, errUnverified, err)
	}
	return nil
}

// onlyURISAN requires the subjectAltName extension to hold exactly one
// GeneralName, the URI uri. It reads the raw extension, so that name types
// crypto/x509 does not parse (otherName, directoryName...) are seen too.
func onlyURISAN(cert *x509.Certificate, uri *url.URL) error {
	var raw []byte
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(oidSubjectAltName) {
			raw = ext.Value
		}
	}
	if raw == nil {
		return errors.New("it has no subjectAltName")
	}
	var seq asn1.RawValue
	if rest, err := asn1.Unmarshal(raw, &seq); err != nil || len(rest) > 0 || !seq.IsCompound || seq.Tag != asn1.TagSequence {
		return errors.New("its subjectAltName is malformed")
	}
	var names []asn1.RawValue
	for rest := seq.Bytes; len(rest) > 0; {
		var n asn1.RawValue
		var err error
		if rest, err = asn1.Unmarshal(rest, &n); err != nil {
			return errors.New("its subjectAltName is malformed")
		}
		names = append(names, n)
	}
	if len(names) != 1 || names[0].Class != asn1.ClassContextSpecific || names[0].Tag != tagURI {
		return fmt.Errorf("the issuer added subject alternative names: want only the URI %s, got %s", uri, describeSANs(cert, len(names)))
	}
	if string(names[0].Bytes) != uri.String() {
		return fmt.Errorf("its URI SAN %q is not the one asked for, %s", printable(string(names[0].Bytes)), uri)
	}
	return nil
}

// describeSANs names the SANs crypto/x509 parsed, for an error message.
func describeSANs(cert *x509.Certificate, total int) string {
	var parts []string
	for _, d := range cert.DNSNames {
		parts = append(parts, "DNS:"+printable(d))
	}
	for _, ip := range cert.IPAddresses {
		parts = append(parts, "IP:"+ip.String())
	}
	for _, e := range cert.EmailAddresses {
		parts = append(parts, "email:"+printable(e))
	}
	for _, u := range cert.URIs {
		parts = append(parts, "URI:"+printable(u.String()))
	}
	if other := total - len(parts); other > 0 {
		parts = append(parts, fmt.Sprintf("%d other name(s)", other))
	}
	return strings.Join(parts, ", ")
}

// printable bounds s and replaces control characters, for messages built
// from what an issuer wrote.
func printable(s string) string {
	const limit = 256
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

// parseCerts is pem.Certificates with this package's wording of a
// certificate x509 refuses.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	certs, err := credopem.Certificates(data)
	var bad *credopem.CertificateError
	if errors.As(err, &bad) {
		return nil, fmt.Errorf("parsing a certificate: %w", bad.Err)
	}
	return certs, err
}

func encodeCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func isAmong(c *x509.Certificate, set []*x509.Certificate) bool {
	for _, s := range set {
		if c.Equal(s) {
			return true
		}
	}
	return false
}

// sameCerts reports whether a and b hold the same certificates, in order.
func sameCerts(a, b []*x509.Certificate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}
