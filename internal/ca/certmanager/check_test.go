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
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// sanExtension builds a raw subjectAltName extension from GeneralNames.
func sanExtension(t *testing.T, names ...asn1.RawValue) pkix.Extension {
	t.Helper()
	var inner []byte
	for _, n := range names {
		b, err := asn1.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		inner = append(inner, b...)
	}
	seq, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: inner})
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: oidSubjectAltName, Value: seq}
}

func uriName(u string) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: tagURI, Bytes: []byte(u)}
}

// otherName is a GeneralName crypto/x509 does not parse: [0] otherName.
func otherName(t *testing.T) asn1.RawValue {
	t.Helper()
	oid, err := asn1.Marshal(asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	val, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true,
		Bytes: mustMarshal(t, "admin@example.org")})
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: append(oid, val...)}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leafWith signs a leaf for key with the given template changes, under a fresh root.
func leafWith(t *testing.T, mutate func(*x509.Certificate)) (*x509.Certificate, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	now := time.Now()
	root := testpki.Authority(t, "root", testpki.NotAfter(now.Add(time.Hour)))
	opts := []testpki.Option{testpki.URIs(enrollapi.WorkloadURI(testUUID)), testpki.Validity(now.Add(-time.Minute), now.Add(time.Hour))}
	if mutate != nil {
		opts = append(opts, testpki.Template(mutate))
	}
	leaf := testpki.Leaf(t, root, opts...)
	return leaf.Cert, root.Cert, leaf.Key.(*ecdsa.PrivateKey)
}

func TestCheckRefusesAnythingButTheOneURIAskedFor(t *testing.T) {
	want := enrollapi.WorkloadURI(testUUID)
	tests := []struct {
		name    string
		mutate  func(t *testing.T, c *x509.Certificate)
		wantErr string
	}{
		{"the URI alone passes", nil, ""},
		{"an added DNS name is refused", func(_ *testing.T, c *x509.Certificate) { c.DNSNames = []string{"a.example.org"} },
			"DNS:a.example.org"},
		{"an added email address is refused", func(_ *testing.T, c *x509.Certificate) { c.EmailAddresses = []string{"a@example.org"} },
			"email:a@example.org"},
		{"a second URI is refused", func(_ *testing.T, c *x509.Certificate) {
			c.URIs = append(c.URIs, &url.URL{Scheme: "spiffe", Host: "example.org", Path: "/x"})
		}, "URI:spiffe://example.org/x"},
		{"an otherName crypto/x509 does not parse is refused", func(t *testing.T, c *x509.Certificate) {
			c.URIs = nil
			c.ExtraExtensions = []pkix.Extension{sanExtension(t, uriName(want.String()), otherName(t))}
		}, "1 other name(s)"},
		{"another workload's URI is refused", func(_ *testing.T, c *x509.Certificate) {
			c.URIs = []*url.URL{enrollapi.WorkloadURI("someone-else")}
		}, "is not the one asked for"},
		{"no SAN at all is refused", func(_ *testing.T, c *x509.Certificate) { c.URIs = nil }, "no subjectAltName"},
		{"a CA certificate is refused", func(_ *testing.T, c *x509.Certificate) {
			c.IsCA, c.BasicConstraintsValid = true, true
		}, "is a CA certificate"},
		{"a server-only certificate is refused", func(_ *testing.T, c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		}, "client authentication"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			leaf, root, key := leafWith(t, func(c *x509.Certificate) {
				if tt.mutate != nil {
					tt.mutate(t, c)
				}
			})
			err := (&issued{leaf: leaf}).check(key.Public(), want, []*x509.Certificate{root}, time.Now())
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ErrRefused))
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}

func TestCheckRefusesACertificateOutsideTheBundle(t *testing.T) {
	g := NewWithT(t)
	leaf, _, key := leafWith(t, nil)
	_, otherRoot, _ := leafWith(t, nil)
	err := (&issued{leaf: leaf}).check(key.Public(), enrollapi.WorkloadURI(testUUID), []*x509.Certificate{otherRoot}, time.Now())
	g.Expect(err).To(MatchError(ErrRefused))
	g.Expect(err).To(MatchError(ContainSubstring("does not verify against the trust bundle")))
}

func TestParseIssuedLeavesBundleRootsOutOfTheChain(t *testing.T) {
	g := NewWithT(t)
	leaf, root, _ := leafWith(t, nil)
	out, err := parseIssued(append(encodeCert(leaf), encodeCert(root)...), encodeCert(root), []*x509.Certificate{root})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.leaf.Equal(leaf)).To(BeTrue())
	g.Expect(out.chain).To(BeEmpty())
	g.Expect(out.chainPEM).To(BeEmpty())

	out, err = parseIssued(encodeCert(leaf), encodeCert(root), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.chain).To(HaveLen(1), "status.ca that is no bundle root goes into the chain")

	_, err = parseIssued(nil, nil, nil)
	g.Expect(err).To(MatchError(ContainSubstring("no certificate")))
}

func TestIssuerMessagesAreBoundedAndNeverCarryPEM(t *testing.T) {
	g := NewWithT(t)
	g.Expect(safeMessage("bad\x1b[31m request")).To(Equal("bad?[31m request"))
	g.Expect(safeMessage("got -----BEGIN EC PRIVATE KEY----- abc")).NotTo(ContainSubstring("BEGIN"))
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'a'
	}
	g.Expect(len(safeMessage(string(long)))).To(BeNumerically("<=", 260))
}
