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

package pem

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// FindingKind classifies a problem Check found with a certificate.
type FindingKind string

const (
	// FindingNotCA means the certificate is not a CA certificate: its basic
	// constraints extension is missing or does not set the CA flag.
	FindingNotCA FindingKind = "NotCA"
	// FindingMissingKeyCertSign means the certificate is a CA certificate
	// with a key usage extension that does not allow certificate signing.
	FindingMissingKeyCertSign FindingKind = "MissingKeyCertSign"
	// FindingExpired means the certificate's validity ended before now.
	FindingExpired FindingKind = "Expired"
	// FindingExpiringSoon means the certificate is still valid but expires
	// within the window given to Check.
	FindingExpiringSoon FindingKind = "ExpiringSoon"
)

// Finding is one problem Check found with one certificate.
type Finding struct {
	// Kind classifies the problem.
	Kind FindingKind
	// Index is the 0-based position of the certificate in the slice given
	// to Check.
	Index int
	// Message describes the problem for humans. It names the certificate by
	// its 1-based position and subject and contains times, nothing else.
	Message string
}

// Check reports, per certificate, in certificate order and, for each
// certificate, in this order:
//
//   - FindingNotCA when !IsCA or !BasicConstraintsValid;
//   - FindingMissingKeyCertSign when the certificate is a CA, has a key usage
//     extension (KeyUsage != 0) and that lacks x509.KeyUsageCertSign;
//   - FindingExpired when now is after NotAfter;
//   - FindingExpiringSoon when not expired and NotAfter - now < window.
//
// A healthy CA yields no findings; nil is returned then.
func Check(certs []*x509.Certificate, now time.Time, window time.Duration) []Finding {
	var findings []Finding
	for i, cert := range certs {
		if cert == nil {
			continue
		}
		name := fmt.Sprintf("certificate %d (%s)", i+1, subjectOf(cert))
		add := func(kind FindingKind, format string, args ...any) {
			findings = append(findings, Finding{Kind: kind, Index: i, Message: name + " " + fmt.Sprintf(format, args...)})
		}
		isCA := cert.IsCA && cert.BasicConstraintsValid
		if !isCA {
			add(FindingNotCA, "is not a CA certificate")
		}
		if isCA && cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
			add(FindingMissingKeyCertSign, "is a CA certificate whose key usage does not include certificate signing")
		}
		notAfter := cert.NotAfter.UTC().Format(time.RFC3339)
		switch {
		case now.After(cert.NotAfter):
			add(FindingExpired, "expired at %s", notAfter)
		case cert.NotAfter.Sub(now) < window:
			add(FindingExpiringSoon, "expires at %s, in less than %s", notAfter, window)
		}
	}
	return findings
}

// maxSubjectRunes bounds how much of a subject goes into a message.
const maxSubjectRunes = 128

// subjectOf renders the certificate's subject for a message, replacing
// non-printable characters and truncating long subjects, so a hostile subject
// cannot forge log lines.
func subjectOf(cert *x509.Certificate) string {
	s := cert.Subject.String()
	if s == "" {
		return "empty subject"
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxSubjectRunes {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
