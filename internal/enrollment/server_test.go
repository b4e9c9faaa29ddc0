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

package enrollment_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

func policySpec(ttl, grace time.Duration) enrollv1.EnrollmentPolicySpec {
	return enrollv1.EnrollmentPolicySpec{
		AllowedLabels:  []enrollv1.LabelRule{{Key: "role", Values: []string{"web", "db"}}, {Key: "env"}},
		CertificateTTL: &metav1.Duration{Duration: ttl},
		RenewalGrace:   &metav1.Duration{Duration: grace},
	}
}

func TestEnrollIssuesAOneURICertificateAndRecordsTheTokensUse(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(2*time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)

	w := enroll(t, base, token, map[string]string{"role": "web", "env": "prod"})

	c := w.cert
	if len(c.URIs) != 1 || c.URIs[0].String() != "credo://workload/"+w.uuid {
		t.Fatalf("URI SANs %v, want exactly credo://workload/%s", c.URIs, w.uuid)
	}
	if len(c.DNSNames)+len(c.IPAddresses)+len(c.EmailAddresses) != 0 {
		t.Fatal("the certificate carries SANs besides the URI")
	}
	if life := c.NotAfter.Sub(c.NotBefore); life < 2*time.Hour || life > 2*time.Hour+6*time.Minute {
		t.Fatalf("lifetime %s, want the policy's 2h plus a backdate of at most 5m", life)
	}
	if time.Until(c.NotBefore) > 0 {
		t.Fatal("notBefore is in the future")
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(w.resp.Bundle))
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("the certificate does not verify against the returned bundle: %v", err)
	}
	if w.resp.RenewalGraceSeconds != 3600 {
		t.Fatalf("renewalGraceSeconds %d, want 3600", w.resp.RenewalGraceSeconds)
	}

	wl := getWorkload(t, ns, w.uuid)
	if wl.Spec.Hostname != "vm-1.example.org" || wl.Spec.Labels["role"] != "web" || wl.Spec.Token != jt.Name || wl.Spec.Policy != p.Name {
		t.Fatalf("registry entry %+v does not hold the hostname, labels, token and policy", wl.Spec)
	}
	// The attributes step 1 checked are established with the certificate,
	// in the same write.
	if !maps.Equal(wl.Status.Labels, wl.Spec.Labels) || wl.Status.Hostname != wl.Spec.Hostname || wl.Status.AttributesGeneration != wl.Generation {
		t.Fatalf("established attributes %v %q (generation %d), want the spec's %v %q (generation %d)",
			wl.Status.Labels, wl.Status.Hostname, wl.Status.AttributesGeneration, wl.Spec.Labels, wl.Spec.Hostname, wl.Generation)
	}
	if wl.Status.Serial != fmt.Sprintf("%x", c.SerialNumber) || wl.Status.NotAfter == nil || !wl.Status.NotAfter.Time.Equal(c.NotAfter.Truncate(time.Second)) {
		t.Fatalf("status serial %q notAfter %v do not name the issued certificate", wl.Status.Serial, wl.Status.NotAfter)
	}
	if ra := wl.Status.RenewAfter.Time; ra.Before(c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore)*2/3-time.Second)) || !ra.Before(c.NotAfter) {
		t.Fatalf("renewAfter %s is not the start of the last third", ra)
	}
	got := tokenWithUses(t, jt, 1)
	if got.Status.Uses != 1 || got.Status.LastWorkload != w.uuid || got.Status.LastUsedAt == nil {
		t.Fatalf("token use not recorded: %+v", got.Status)
	}

	// The token enrolls many workloads within its policy.
	w2 := enroll(t, base, token, nil)
	if w2.uuid == w.uuid {
		t.Fatal("two enrollments got the same UUID")
	}
	if got := tokenWithUses(t, jt, 2); got.Status.Uses != 2 || got.Status.LastWorkload != w2.uuid {
		t.Fatalf("second use not recorded: %+v", got.Status)
	}
}

func TestRefusedEnrollmentsRecordNothingAndDoNotBurnTheToken(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)
	expired, _ := newToken(t, p, -time.Minute)
	revoked, rjt := newToken(t, p, time.Hour)
	before := rjt.DeepCopy()
	rjt.Spec.Revoked = true
	// A patch: the EnrollmentPolicy reconciler writes the token's status meanwhile.
	if err := k8s.Patch(context.Background(), rjt, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var got enrollv1.JoinToken
		return reader.Get(context.Background(), keyOf(rjt), &got) == nil && got.Spec.Revoked
	})
	c := httpClient(nil)
	step1 := func(tok string, labels map[string]string) (int, *enrollapi.Error) {
		return post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: tok, Hostname: "h", Labels: labels}, nil)
	}
	id, secret, _ := strings.Cut(token, ".")
	other, _ := jointoken.New()

	for _, tc := range []struct {
		name   string
		token  string
		labels map[string]string
		status int
		reason string
	}{
		{"unknown token", other.String(), nil, 401, enrollapi.ReasonTokenInvalid},
		{"wrong secret", id + "." + other.Secret, nil, 401, enrollapi.ReasonTokenInvalid},
		{"malformed token", id, nil, 401, enrollapi.ReasonTokenInvalid},
		{"expired token", expired, nil, 401, enrollapi.ReasonTokenExpired},
		{"revoked token", revoked, nil, 401, enrollapi.ReasonTokenRevoked},
		{"label not allowed", token, map[string]string{"team": "x"}, 403, enrollapi.ReasonLabelsNotAllowed},
		{"label value not allowed", token, map[string]string{"role": "admin"}, 403, enrollapi.ReasonLabelsNotAllowed},
	} {
		status, e := step1(tc.token, tc.labels)
		expectRefused(t, tc.name, status, e, tc.status, tc.reason)
		if strings.Contains(e.Message, secret) || strings.Contains(e.Message, other.Secret) {
			t.Fatalf("%s: the answer quotes a token secret", tc.name)
		}
	}

	// Step 2 with a bad CSR: the workload stays pending, nothing signed.
	var reg enrollapi.EnrollResponse
	if status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token, Hostname: "h"}, &reg); e != nil {
		t.Fatalf("step 1: %d %s", status, e)
	}
	key := testpki.Key(t)
	uri := enrollapi.WorkloadURI(reg.UUID)
	goodCSR := workloadCSR(t, key, reg.UUID)
	badSig := []byte(goodCSR)
	// Flip a bit inside the base64 body near its end: the signature.
	lines := strings.Split(string(badSig), "\n")
	last := lines[len(lines)-3]
	lines[len(lines)-3] = last[:len(last)-4] + flip(last[len(last)-4:])
	for _, tc := range []struct {
		name string
		csr  string
	}{
		{"bad signature", strings.Join(lines, "\n")},
		{"DNS SAN", csrPEM(t, key, &x509.CertificateRequest{URIs: []*url.URL{uri}, DNSNames: []string{"evil.example.org"}})},
		{"another URI", csrPEM(t, key, &x509.CertificateRequest{URIs: []*url.URL{enrollapi.WorkloadURI("someone-else")}})},
		{"two URIs", csrPEM(t, key, &x509.CertificateRequest{URIs: []*url.URL{uri, uri}})},
		{"no URI", csrPEM(t, key, &x509.CertificateRequest{})},
		{"URI and otherName SAN", sanCSR(t, key, uriName(uri), otherName(t))},
		{"URI and directoryName SAN", sanCSR(t, key, uriName(uri), directoryName(t))},
		{"directoryName SAN before the URI", sanCSR(t, key, directoryName(t), uriName(uri))},
		{"URI and registeredID SAN", sanCSR(t, key, uriName(uri), registeredID(t))},
		{"two SAN extensions", twoSANs(t, key, uri)},
		{"not PEM", "hello"},
	} {
		status, e := post(t, c, base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: tc.csr}, nil)
		expectRefused(t, tc.name, status, e, 400, enrollapi.ReasonCSRInvalid)
	}
	signedBefore := testCA.signed.Load()
	if wl := getWorkload(t, ns, reg.UUID); wl.Status.Serial != "" {
		t.Fatal("a refused CSR left a serial on the workload")
	}
	time.Sleep(200 * time.Millisecond) // ten flushes
	if got := getToken(t, jt); got.Status.Uses != 0 {
		t.Fatalf("refusals were recorded as uses: %+v", got.Status)
	}
	// Another token of the namespace cannot finish this registration.
	token2, _ := newToken(t, p, time.Hour)
	status, e := post(t, c, base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token2, CSR: goodCSR}, nil)
	expectRefused(t, "other token's registration", status, e, 404, enrollapi.ReasonWorkloadNotFound)

	// The token was not burned: the same registration completes.
	var resp enrollapi.CertificateResponse
	if status, e := post(t, c, base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: goodCSR}, &resp); e != nil {
		t.Fatalf("the token no longer enrolls after refusals: %d %s", status, e)
	}
	if testCA.signed.Load() != signedBefore+1 {
		t.Fatal("refused requests reached the CA")
	}
	if got := tokenWithUses(t, jt, 1); got.Status.Uses != 1 {
		t.Fatalf("uses %d, want 1", got.Status.Uses)
	}
	// And a second certificate request for an enrolled workload is refused
	// (the same request again is a retry, answered with the certificate
	// issued: duplicate_test.go).
	status, e = post(t, c, base+enrollapi.PathCertificate(reg.UUID), enrollapi.CertificateRequest{Token: token, CSR: workloadCSR(t, testpki.Key(t), reg.UUID)}, nil)
	expectRefused(t, "second certificate", status, e, 409, enrollapi.ReasonBadRequest)
	if strings.Contains(env.Logs.String(), secret) {
		t.Fatal("a token secret reached the log")
	}
}

// sanCSR returns a CSR signed by key whose subject alternative name
// extension holds exactly names, as raw GeneralNames: Go's x509 package
// drops the kinds it does not know when it parses them.
func sanCSR(t *testing.T, key *ecdsa.PrivateKey, names ...asn1.RawValue) string {
	t.Helper()
	value, err := asn1.Marshal(names)
	if err != nil {
		t.Fatal(err)
	}
	return csrPEM(t, key, &x509.CertificateRequest{ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: value}}})
}

// twoSANs returns a CSR with two subject alternative name extensions, each
// holding the URI.
func twoSANs(t *testing.T, key *ecdsa.PrivateKey, uri *url.URL) string {
	t.Helper()
	value, err := asn1.Marshal([]asn1.RawValue{uriName(uri)})
	if err != nil {
		t.Fatal(err)
	}
	ext := pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: value}
	return csrPEM(t, key, &x509.CertificateRequest{ExtraExtensions: []pkix.Extension{ext, ext}})
}

// uriName is the GeneralName [6] uniformResourceIdentifier.
func uriName(u *url.URL) asn1.RawValue {
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 6, Bytes: []byte(u.String())}
}

// otherName is a GeneralName [0] otherName: a UPN, as Active Directory
// maps to an account.
func otherName(t *testing.T) asn1.RawValue {
	t.Helper()
	seq, err := asn1.Marshal(struct {
		ID    asn1.ObjectIdentifier
		Value string `asn1:"explicit,tag:0,utf8"`
	}{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2, 3}, "administrator@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	var inner asn1.RawValue
	if _, err := asn1.Unmarshal(seq, &inner); err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner.Bytes}
}

// directoryName is a GeneralName [4] directoryName: CN=admin.
func directoryName(t *testing.T) asn1.RawValue {
	t.Helper()
	name, err := asn1.Marshal(pkix.Name{CommonName: "admin"}.ToRDNSequence())
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: name}
}

// registeredID is a GeneralName [8] registeredID.
func registeredID(t *testing.T) asn1.RawValue {
	t.Helper()
	oid, err := asn1.Marshal(asn1.ObjectIdentifier{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	var inner asn1.RawValue
	if _, err := asn1.Unmarshal(oid, &inner); err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 8, Bytes: inner.Bytes}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestRevokedPolicyEnrollsAndRenewsNothing(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)

	before := p.DeepCopy()
	p.Spec.Revoked = true
	// A patch: the EnrollmentPolicy reconciler writes the policy's status meanwhile.
	if err := k8s.Patch(context.Background(), p, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var got enrollv1.EnrollmentPolicy
		return reader.Get(context.Background(), keyOf(p), &got) == nil && got.Spec.Revoked
	})
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, nil)
	expectRefused(t, "enroll under a revoked policy", status, e, 403, enrollapi.ReasonPolicyRevoked)
	status, e, _ = renew(t, base, w, w.tlsCert())
	expectRefused(t, "renew under a revoked policy", status, e, 403, enrollapi.ReasonPolicyRevoked)
	if !e.NeedsReenrollment() {
		t.Fatal("a revoked policy does not tell the agent to enroll again")
	}
}

func TestFailedTokenAttemptsAreRateLimited(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 3))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	bad, _ := jointoken.New()
	c := httpClient(nil)
	for i := range 3 {
		status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: bad.String()}, nil)
		expectRefused(t, fmt.Sprintf("attempt %d", i), status, e, 401, enrollapi.ReasonTokenInvalid)
	}
	status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: bad.String()}, nil)
	expectRefused(t, "fourth attempt", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)
	// A good token is not: the budget spent was the one of ids that name
	// no token, at this address.
	if status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, nil); e != nil {
		t.Fatalf("good token from a limited address: %d %s", status, e)
	}
}
