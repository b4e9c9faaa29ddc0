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

package enrollment

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

// maxCSRBytes bounds the PEM an agent may send.
const maxCSRBytes = 16 << 10

// oidSubjectAltName is the only extension a certificate request may carry.
var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

// OtherFormError is CheckCSR's answer to a request for the URI of the same
// workload in another identity form than the one wanted: the install's
// form changed since the workload's certificate was issued.
type OtherFormError struct {
	// Got is the URI the request names; Want the one it should.
	Got, Want *url.URL
}

func (e *OtherFormError) Error() string {
	return fmt.Sprintf("the certificate request names %s; the workload's URI is %s now", e.Got, e.Want)
}

// CheckCSR parses a PEM certificate request and checks that it is signed by
// its own key and asks for exactly what the server signs: one URI SAN, want
// (a workload URI, IdentityForm.URI(uuid)), a subject that is empty or names
// the UUID, and nothing else. A request naming the workload's URI in another
// identity form is refused with an *OtherFormError. The error says what was
// wrong, never the request's content beyond names.
func CheckCSR(csrPEM []byte, want *url.URL) (*x509.CertificateRequest, error) {
	uuid, err := enrollapi.WorkloadIDOf(want)
	if err != nil {
		return nil, fmt.Errorf("checking the certificate request: %w", err)
	}
	if len(csrPEM) > maxCSRBytes {
		return nil, fmt.Errorf("the certificate request is larger than %d bytes", maxCSRBytes)
	}
	block, rest := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the certificate request is not a PEM CERTIFICATE REQUEST block")
	}
	if p, _ := pem.Decode(rest); p != nil {
		return nil, errors.New("the certificate request holds more than one PEM block")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the certificate request does not parse: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, errors.New("the certificate request's signature does not verify with its public key")
	}
	if err := checkKey(csr.PublicKey); err != nil {
		return nil, err
	}
	if len(csr.DNSNames) > 0 || len(csr.IPAddresses) > 0 || len(csr.EmailAddresses) > 0 {
		return nil, errors.New("the certificate request asks for DNS, IP or email SANs; only the workload URI is signed")
	}
	if len(csr.URIs) == 1 && csr.URIs[0].String() != want.String() {
		if _, id, err := enrollapi.FormOf(csr.URIs[0]); err == nil && id == uuid {
			return nil, &OtherFormError{Got: csr.URIs[0], Want: want}
		}
	}
	if len(csr.URIs) != 1 || csr.URIs[0].String() != want.String() {
		return nil, fmt.Errorf("the certificate request must carry exactly one URI SAN, %s", want)
	}
	sans := 0
	for _, ext := range csr.Extensions {
		if !ext.Id.Equal(oidSubjectAltName) {
			return nil, fmt.Errorf("the certificate request asks for extension %s; only the subject alternative name is accepted", ext.Id)
		}
		sans++
		if err := checkGeneralNames(ext.Value); err != nil {
			return nil, err
		}
	}
	if sans != 1 {
		return nil, fmt.Errorf("the certificate request carries %d subject alternative name extensions; want one, with the workload URI only", sans)
	}
	s := csr.Subject
	if len(s.Country)+len(s.Organization)+len(s.OrganizationalUnit)+len(s.Locality)+len(s.Province)+
		len(s.StreetAddress)+len(s.PostalCode)+len(s.ExtraNames) > 0 || s.SerialNumber != "" ||
		(s.CommonName != "" && s.CommonName != uuid) {
		return nil, fmt.Errorf("the certificate request's subject must be empty or CN=%s", uuid)
	}
	return csr, nil
}

// generalNameKinds names the GeneralName choices of RFC 5280, by tag.
var generalNameKinds = map[int]string{
	0: "otherName", 1: "rfc822Name", 2: "dNSName", 3: "x400Address", 4: "directoryName",
	5: "ediPartyName", 6: "uniformResourceIdentifier", 7: "iPAddress", 8: "registeredID",
}

// tagURI is the GeneralName choice [6] uniformResourceIdentifier.
const tagURI = 6

// checkGeneralNames reads the subject alternative name extension's value
// itself, a SEQUENCE OF GeneralName, and accepts exactly one entry, a URI.
// Go's parser keeps only the kinds it knows (DNS, e-mail, IP, URI) and
// drops the others, otherName and directoryName among them: an external
// issuer may copy them into the certificate, where a relying party may
// map them to an account.
func checkGeneralNames(value []byte) error {
	var names []asn1.RawValue
	rest, err := asn1.Unmarshal(value, &names)
	if err != nil || len(rest) > 0 {
		return errors.New("the certificate request's subject alternative name extension is not a sequence of names")
	}
	if len(names) != 1 {
		return fmt.Errorf("the certificate request's subject alternative name extension holds %d names (%s); want the workload URI only",
			len(names), strings.Join(nameKinds(names), ", "))
	}
	n := names[0]
	if n.Class != asn1.ClassContextSpecific || n.Tag != tagURI || n.IsCompound {
		return fmt.Errorf("the certificate request's subject alternative name is a %s; want the workload URI only", nameKinds(names)[0])
	}
	return nil
}

// nameKinds names each GeneralName's kind, never its content.
func nameKinds(names []asn1.RawValue) []string {
	kinds := make([]string, 0, len(names))
	for _, n := range names {
		kind, ok := generalNameKinds[n.Tag]
		if n.Class != asn1.ClassContextSpecific || !ok {
			kind = fmt.Sprintf("name of class %d tag %d", n.Class, n.Tag)
		}
		kinds = append(kinds, kind)
	}
	return kinds
}

func checkKey(pub any) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return errors.New("the certificate request's ECDSA key must be on P-256 or P-384")
		}
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return errors.New("the certificate request's RSA key must have at least 2048 bits")
		}
	case ed25519.PublicKey:
	default:
		return fmt.Errorf("the certificate request's key type %T is not accepted", pub)
	}
	return nil
}
