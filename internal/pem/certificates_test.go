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
	"crypto/x509"
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/pem"
)

func TestCertificates(t *testing.T) {
	f := fixtures()
	tests := []struct {
		name   string
		input  []byte
		among  bool // CertificatesAmong rather than Certificates
		want   []*x509.Certificate
		errMsg string
		badDER bool
	}{
		{name: "a chain is returned in order", input: join(f.leafPEM, f.intermediatePEM, f.rootPEM),
			want: []*x509.Certificate{f.leaf, f.intermediate, f.root}},
		{name: "no block is no certificate and no error", input: []byte("\n")},
		{name: "a key among the certificates is refused", input: join(f.rootPEM, f.pkcs8PEM()), errMsg: `unexpected PEM block "PRIVATE KEY"`},
		{name: "CertificatesAmong passes over a key", input: join(f.pkcs8PEM(), f.rootPEM), among: true,
			want: []*x509.Certificate{f.root}},
		{name: "a certificate x509 refuses is a CertificateError", input: pemBlock("CERTIFICATE", []byte("not DER")), badDER: true},
		{name: "CertificatesAmong refuses a certificate x509 refuses", input: pemBlock("CERTIFICATE", []byte("not DER")), among: true, badDER: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			parse := pem.Certificates
			if tt.among {
				parse = pem.CertificatesAmong
			}
			got, err := parse(tt.input)
			switch {
			case tt.badDER:
				var bad *pem.CertificateError
				g.Expect(errors.As(err, &bad)).To(BeTrue(), "error %v", err)
			case tt.errMsg != "":
				g.Expect(err).To(MatchError(tt.errMsg))
			default:
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(HaveLen(len(tt.want)))
				for i := range tt.want {
					g.Expect(got[i].Equal(tt.want[i])).To(BeTrue(), "certificate %d", i)
				}
			}
		})
	}
}
