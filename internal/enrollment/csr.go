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
)

// maxCSRBytes bounds the PEM an agent may send.
const maxCSRBytes = 16 << 10

// oidSubjectAltName is the only extension a certificate request may carry.
var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

// CheckCSR parses a PEM certificate request and checks that it is signed by
// its own key and asks for exactly what the server signs: one URI SAN equal
// to want, a subject that is empty or names the UUID, and nothing else. The
// error says what was wrong, never the request's content beyond names.
func CheckCSR(csrPEM []byte, want *url.URL, uuid string) (*x509.CertificateRequest, error) {
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
	if len(csr.URIs) != 1 || csr.URIs[0].String() != want.String() {
		return nil, fmt.Errorf("the certificate request must carry exactly one URI SAN, %s", want)
	}
	for _, ext := range csr.Extensions {
		if !ext.Id.Equal(oidSubjectAltName) {
			return nil, fmt.Errorf("the certificate request asks for extension %s; only the subject alternative name is accepted", ext.Id)
		}
	}
	s := csr.Subject
	if len(s.Country)+len(s.Organization)+len(s.OrganizationalUnit)+len(s.Locality)+len(s.Province)+
		len(s.StreetAddress)+len(s.PostalCode)+len(s.ExtraNames) > 0 || s.SerialNumber != "" ||
		(s.CommonName != "" && s.CommonName != uuid) {
		return nil, fmt.Errorf("the certificate request's subject must be empty or CN=%s", uuid)
	}
	return csr, nil
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
