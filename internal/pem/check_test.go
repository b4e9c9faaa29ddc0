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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/pem"
)

func TestCheck(t *testing.T) {
	f := fixtures()
	day := 24 * time.Hour
	type want struct {
		kind    pem.FindingKind
		index   int
		message string
	}
	tests := []struct {
		name   string
		certs  []*x509.Certificate
		window time.Duration
		want   []want
	}{
		{"a healthy CA has no findings", []*x509.Certificate{f.root}, 30 * day, nil},
		{"a healthy chain of CAs has no findings", []*x509.Certificate{f.intermediate, f.root}, 30 * day, nil},
		{"a CA without a key usage extension has no findings", []*x509.Certificate{f.noKeyUsage}, 30 * day, nil},
		{"no certificates have no findings", nil, 30 * day, nil},
		{"a leaf certificate is not a CA", []*x509.Certificate{f.root, f.leaf}, 30 * day, []want{
			{pem.FindingNotCA, 1, "certificate 2 (CN=credo test leaf,O=credo tests) is not a CA certificate"},
		}},
		{"a certificate without basic constraints is not a CA even with certificate signing usage",
			[]*x509.Certificate{f.notCA}, 30 * day, []want{
				{pem.FindingNotCA, 0, "certificate 1 (CN=credo no basic constraints,O=credo tests) is not a CA certificate"},
			}},
		{"a CA whose key usage lacks certificate signing is reported",
			[]*x509.Certificate{f.noCertSign}, 30 * day, []want{
				{pem.FindingMissingKeyCertSign, 0, "certificate 1 (CN=credo ca without certsign,O=credo tests) is a CA certificate whose key usage does not include certificate signing"},
			}},
		{"an expired CA is reported as expired and not as expiring soon",
			[]*x509.Certificate{f.expired}, 30 * day, []want{
				{pem.FindingExpired, 0, "certificate 1 (CN=credo expired ca,O=credo tests) expired at " + rfc3339(f.expired.NotAfter)},
			}},
		{"a CA expiring within the window is reported as expiring soon",
			[]*x509.Certificate{f.expiring}, 2 * time.Hour, []want{
				{pem.FindingExpiringSoon, 0, "certificate 1 (CN=credo expiring ca,O=credo tests) expires at " + rfc3339(f.expiring.NotAfter) + ", in less than 2h0m0s"},
			}},
		{"a CA expiring after the window is not reported", []*x509.Certificate{f.expiring}, 30 * time.Minute, nil},
		{"a zero window never reports expiring soon", []*x509.Certificate{f.expiring}, 0, nil},
		{"findings are ordered by certificate, then by kind",
			[]*x509.Certificate{f.expiring, f.leaf, f.noCertSign, f.expired}, 400 * day, []want{
				{pem.FindingExpiringSoon, 0, "certificate 1 (CN=credo expiring ca,O=credo tests) expires at"},
				{pem.FindingNotCA, 1, "certificate 2 (CN=credo test leaf,O=credo tests) is not a CA certificate"},
				{pem.FindingExpiringSoon, 1, "certificate 2 (CN=credo test leaf,O=credo tests) expires at"},
				{pem.FindingMissingKeyCertSign, 2, "certificate 3 (CN=credo ca without certsign,O=credo tests) is a CA"},
				{pem.FindingExpiringSoon, 2, "certificate 3 (CN=credo ca without certsign,O=credo tests) expires at"},
				{pem.FindingExpired, 3, "certificate 4 (CN=credo expired ca,O=credo tests) expired at"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := pem.Check(tt.certs, f.now, tt.window)
			g.Expect(got).To(HaveLen(len(tt.want)), "findings: %+v", got)
			for i, w := range tt.want {
				g.Expect(got[i].Kind).To(Equal(w.kind), "finding %d", i)
				g.Expect(got[i].Index).To(Equal(w.index), "finding %d", i)
				g.Expect(got[i].Message).To(HavePrefix(w.message), "finding %d", i)
			}
		})
	}
}

func TestCheckJudgesExpiryAgainstTheGivenTime(t *testing.T) {
	g := NewWithT(t)
	f := fixtures()
	atExpiry := pem.Check([]*x509.Certificate{f.root}, f.root.NotAfter, time.Nanosecond)
	g.Expect(atExpiry).To(HaveLen(1))
	g.Expect(atExpiry[0].Kind).To(Equal(pem.FindingExpiringSoon), "at NotAfter a certificate is not yet expired")

	justAfter := pem.Check([]*x509.Certificate{f.root}, f.root.NotAfter.Add(time.Second), 0)
	g.Expect(justAfter).To(HaveLen(1))
	g.Expect(justAfter[0].Kind).To(Equal(pem.FindingExpired))
}

func TestCheckSanitisesHostileSubjects(t *testing.T) {
	g := NewWithT(t)
	f := fixtures()
	cert := *f.root
	cert.Subject.CommonName = "evil\nlevel=info msg=forged " + strings.Repeat("x", 500)
	cert.Subject.Organization = nil
	findings := pem.Check([]*x509.Certificate{&cert}, f.root.NotAfter.Add(time.Hour), 0)
	g.Expect(findings).To(HaveLen(1))
	g.Expect(findings[0].Message).NotTo(ContainSubstring("\n"))
	g.Expect(len(findings[0].Message)).To(BeNumerically("<", 250))
}

func rfc3339(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
