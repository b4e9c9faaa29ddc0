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
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/pem"
)

func TestParseAcceptsCertificateBundles(t *testing.T) {
	f := fixtures()
	tests := []struct {
		name  string
		input []byte
		want  []*x509.Certificate
	}{
		{"a single CA certificate is accepted", f.rootPEM, []*x509.Certificate{f.root}},
		{"a bundle of two certificates is accepted in input order",
			join(f.intermediatePEM, f.rootPEM), []*x509.Certificate{f.intermediate, f.root}},
		{"a chain including a leaf is accepted because Parse does not judge CA-ness",
			join(f.leafPEM, f.intermediatePEM, f.rootPEM), []*x509.Certificate{f.leaf, f.intermediate, f.root}},
		{"CRLF line endings are accepted", crlf(join(f.rootPEM, f.intermediatePEM)),
			[]*x509.Certificate{f.root, f.intermediate}},
		{"leading and trailing whitespace is accepted",
			join([]byte(" \t\r\n\n"), f.rootPEM, []byte("\n\n \t\r\n")), []*x509.Certificate{f.root}},
		{"whitespace between blocks is accepted",
			join(f.rootPEM, []byte("\n \t \r\n\n"), f.intermediatePEM), []*x509.Certificate{f.root, f.intermediate}},
		{"a final block without a trailing newline is accepted",
			bytes.TrimRight(f.rootPEM, "\n"), []*x509.Certificate{f.root}},
		{"exactly 64 certificates are accepted", f.bundleOf(64), repeat(f.root, 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bundle, err := pem.Parse(tt.input)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(bundle.Certificates).To(HaveLen(len(tt.want)))
			var canonical []byte
			for i, want := range tt.want {
				g.Expect(bundle.Certificates[i].Raw).To(Equal(want.Raw), "certificate %d", i)
				g.Expect(bundle.Certificates[i].Equal(want)).To(BeTrue())
				canonical = append(canonical, certPEM(want)...)
			}
			g.Expect(bundle.PEM).To(Equal(canonical))

			again, err := pem.Parse(bundle.PEM)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again.PEM).To(Equal(bundle.PEM))
		})
	}
}

func repeat(cert *x509.Certificate, n int) []*x509.Certificate {
	out := make([]*x509.Certificate, n)
	for i := range out {
		out[i] = cert
	}
	return out
}

type refusal struct {
	name  string
	input []byte
}

// privateKeyInputs are inputs that must be refused with ReasonPrivateKey.
func privateKeyInputs() []refusal {
	f := fixtures()
	return []refusal{
		{"a PKCS#1 RSA PRIVATE KEY is refused as a private key", f.pkcs1PEM()},
		{"a PKCS#8 PRIVATE KEY is refused as a private key", f.pkcs8PEM()},
		{"a PKCS#8 Ed25519 PRIVATE KEY is refused as a private key", f.ed25519PKCS8PEM()},
		{"an EC PRIVATE KEY is refused as a private key", f.sec1PEM()},
		{"an ENCRYPTED PRIVATE KEY is refused as a private key", pemBlock("ENCRYPTED PRIVATE KEY", f.encryptedPKCS8DER())},
		{"an OPENSSH PRIVATE KEY is refused as a private key", f.opensshPEM()},
		{"a PGP PRIVATE KEY BLOCK is refused as a private key", f.pgpBlock()},
		{"a PGP SECRET KEY marker is refused as a private key", []byte("-----BEGIN PGP SECRET KEY BLOCK-----\n")},
		{"a lower-case private key header is refused as a private key",
			bytes.ToLower(f.pkcs8PEM())},
		{"PRIVATE  KEY with two spaces is refused as a private key",
			bytes.ReplaceAll(f.pkcs8PEM(), []byte("PRIVATE KEY"), []byte("PRIVATE  KEY"))},
		{"PRIVATE_KEY with an underscore is refused as a private key", []byte("PRIVATE_KEY=abc")},
		{"private-key with a hyphen is refused as a private key", []byte("private-key")},
		{"PRIVATEKEY without a separator is refused as a private key", []byte("privatekey")},
		{"a PuTTY key file is refused as a private key", []byte("PuTTY-User-Key-File-3: ssh-ed25519\n")},
		{"a valid bundle with a key appended is refused as a private key",
			join(f.rootPEM, f.intermediatePEM, f.sec1PEM())},
		{"a key before a valid certificate is refused as a private key", join(f.pkcs1PEM(), f.rootPEM)},
		{"a key between certificates is refused as a private key", join(f.rootPEM, f.pkcs8PEM(), f.intermediatePEM)},
		{"PKCS#8 DER under a CERTIFICATE header is refused as a private key", pemBlock("CERTIFICATE", f.pkcs8DER())},
		{"PKCS#1 DER under a CERTIFICATE header is refused as a private key",
			pemBlock("CERTIFICATE", x509.MarshalPKCS1PrivateKey(f.rsaKey))},
		{"SEC 1 DER under a CERTIFICATE header is refused as a private key", pemBlock("CERTIFICATE", f.sec1DER())},
		{"encrypted PKCS#8 DER under a CERTIFICATE header is refused as a private key",
			pemBlock("CERTIFICATE", f.encryptedPKCS8DER())},
		{"PKCS#8 DER of an algorithm Go does not know under a CERTIFICATE header is refused as a private key",
			pemBlock("CERTIFICATE", must(asn1.Marshal(struct {
				Version int
				Algo    pkix.AlgorithmIdentifier
				Key     []byte
			}{0, pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{1, 3, 101, 111}}, bytes.Repeat([]byte{7}, 56)})))},
		{"key DER under a CERTIFICATE header after a valid certificate is refused as a private key",
			join(f.rootPEM, pemBlock("CERTIFICATE", f.sec1DER()))},
		{"key DER under an innocent-looking type after junk text is refused as a private key",
			join(f.rootPEM, []byte("junk\n"), pemBlock("DATA", f.pkcs8DER()))},
		{"a key smuggled after 64 certificates is refused as a private key",
			join(f.bundleOf(64), pemBlock("CERTIFICATE", f.pkcs8DER()))},
	}
}

// invalidInputs are inputs that must be refused with ReasonInvalid.
func invalidInputs() []refusal {
	f := fixtures()
	withHeaders := bytes.Replace(f.rootPEM, []byte("-----\n"), []byte("-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n"), 1)
	return []refusal{
		{"nil is refused as invalid", nil},
		{"an empty value is refused as invalid", []byte{}},
		{"whitespace only is refused as invalid", []byte(" \t\r\n \n")},
		{"text before a certificate is refused as invalid", join([]byte("ca.crt: |\n"), f.rootPEM)},
		{"text between certificates is refused as invalid", join(f.rootPEM, []byte("# intermediate\n"), f.intermediatePEM)},
		{"text after a certificate is refused as invalid", join(f.rootPEM, []byte("trailing text"))},
		{"a form feed after a certificate is refused as invalid", join(f.rootPEM, []byte("\f"))},
		{"text after the END line is refused as invalid",
			bytes.Replace(f.rootPEM, []byte("END CERTIFICATE-----"), []byte("END CERTIFICATE-----junk"), 1)},
		{"a certificate block with headers is refused as invalid", withHeaders},
		{"base64 garbage in a CERTIFICATE block is refused as invalid",
			[]byte("-----BEGIN CERTIFICATE-----\nnot*base64!!\n-----END CERTIFICATE-----\n")},
		{"well-formed base64 of random bytes in a CERTIFICATE block is refused as invalid",
			pemBlock("CERTIFICATE", []byte("this is not DER at all, just bytes"))},
		{"an empty CERTIFICATE block is refused as invalid", pemBlock("CERTIFICATE", nil)},
		{"a truncated certificate is refused as invalid", pemBlock("CERTIFICATE", f.root.Raw[:len(f.root.Raw)-10])},
		{"a certificate with trailing DER is refused as invalid", pemBlock("CERTIFICATE", append(bytes.Clone(f.root.Raw), 0x05, 0x00))},
		{"a PUBLIC KEY block is refused as invalid",
			pemBlock("PUBLIC KEY", must(x509.MarshalPKIXPublicKey(f.ecKey.Public())))},
		{"an EC PARAMETERS block is refused as invalid", pemBlock("EC PARAMETERS", []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07})},
		{"a CERTIFICATE REQUEST block is refused as invalid", pemBlock("CERTIFICATE REQUEST", f.root.RawTBSCertificate)},
		{"a TRUSTED CERTIFICATE block is refused as invalid", pemBlock("TRUSTED CERTIFICATE", f.root.Raw)},
		{"a valid bundle followed by a PUBLIC KEY block is refused as invalid",
			join(f.rootPEM, pemBlock("PUBLIC KEY", must(x509.MarshalPKIXPublicKey(f.ecKey.Public()))))},
		{"a lower-case certificate header is refused as invalid", bytes.ToLower(f.rootPEM)},
		{"a BEGIN line without an END line is refused as invalid",
			bytes.TrimSuffix(f.rootPEM, []byte("-----END CERTIFICATE-----\n"))},
		{"mismatched BEGIN and END types are refused as invalid",
			bytes.Replace(f.rootPEM, []byte("END CERTIFICATE"), []byte("END X509 CRL"), 1)},
		{"a malformed block followed by a valid one is refused as invalid",
			join([]byte("-----BEGIN CERTIFICATE-----\n!!!\n"), f.rootPEM)},
		{"a PKCS#1 RSA public key under a CERTIFICATE header is refused as invalid, not as a private key",
			pemBlock("CERTIFICATE", x509.MarshalPKCS1PublicKey(&f.rsaKey.PublicKey))},
		{"a PKIX public key under a CERTIFICATE header is refused as invalid, not as a private key",
			pemBlock("CERTIFICATE", must(x509.MarshalPKIXPublicKey(f.ecKey.Public())))},
		{"a DER certificate without PEM armour is refused as invalid", f.root.Raw},
		{"65 certificates are refused as invalid", f.bundleOf(65)},
		{"more than 1 MiB of input is refused as invalid",
			join(f.rootPEM, bytes.Repeat([]byte("\n"), 1<<20))},
	}
}

func TestParseRefusesPrivateKeys(t *testing.T) {
	for _, tt := range privateKeyInputs() {
		t.Run(tt.name, func(t *testing.T) {
			expectRefusal(t, tt.input, pem.ReasonPrivateKey)
		})
	}
}

func TestParseRefusesEverythingButCertificates(t *testing.T) {
	for _, tt := range invalidInputs() {
		t.Run(tt.name, func(t *testing.T) {
			expectRefusal(t, tt.input, pem.ReasonInvalid)
		})
	}
}

// expectRefusal asserts that Parse refuses input with reason and that the
// error message does not leak the input.
func expectRefusal(t *testing.T, input []byte, reason pem.Reason) {
	t.Helper()
	g := NewWithT(t)
	bundle, err := pem.Parse(input)
	g.Expect(bundle).To(BeNil())
	g.Expect(err).To(HaveOccurred())
	var perr *pem.Error
	g.Expect(errors.As(err, &perr)).To(BeTrue(), "error is a *pem.Error")
	g.Expect(perr.Reason).To(Equal(reason), "detail: %s", perr.Detail)
	g.Expect(pem.IsPrivateKey(err)).To(Equal(reason == pem.ReasonPrivateKey))
	g.Expect(perr.Detail).NotTo(BeEmpty())
	t.Logf("refused: %v", err)
	expectNoLeak(g, input, err.Error())
}

// leakWindow is the length of the shortest input substring an error message
// must not contain.
const leakWindow = 16

// expectNoLeak fails if message contains any substring of input that is
// leakWindow or more bytes long. Any longer common substring contains one of
// exactly leakWindow bytes, so checking those suffices.
func expectNoLeak(g Gomega, input []byte, message string) {
	for i := 0; i+leakWindow <= len(message); i++ {
		window := message[i : i+leakWindow]
		g.Expect(bytes.Contains(input, []byte(window))).To(BeFalse(),
			"error message %q echoes input bytes %q", message, window)
	}
}

func TestErrorMessageNamesReasonAndDetail(t *testing.T) {
	g := NewWithT(t)
	err := &pem.Error{Reason: pem.ReasonInvalid, Detail: "block 2 is not a CERTIFICATE block"}
	g.Expect(err.Error()).To(ContainSubstring(string(pem.ReasonInvalid)))
	g.Expect(err.Error()).To(ContainSubstring("block 2 is not a CERTIFICATE block"))
}

func TestIsPrivateKeySeesThroughWrapping(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a private key error is a private key error",
			&pem.Error{Reason: pem.ReasonPrivateKey}, true},
		{"a wrapped private key error is a private key error",
			fmt.Errorf("projecting ca.crt: %w", &pem.Error{Reason: pem.ReasonPrivateKey}), true},
		{"an invalid certificate error is not a private key error",
			&pem.Error{Reason: pem.ReasonInvalid}, false},
		{"an unrelated error is not a private key error", errors.New("PRIVATE KEY"), false},
		{"nil is not a private key error", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(pem.IsPrivateKey(tt.err)).To(Equal(tt.want))
		})
	}
}
