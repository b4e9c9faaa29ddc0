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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
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

func newPolicy(t testing.TB, ns string, spec enrollv1.EnrollmentPolicySpec) *enrollv1.EnrollmentPolicy {
	t.Helper()
	return newNamedPolicy(t, ns, "agents", spec)
}

func newNamedPolicy(t testing.TB, ns, name string, spec enrollv1.EnrollmentPolicySpec) *enrollv1.EnrollmentPolicy {
	t.Helper()
	p := &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// newToken writes a JoinToken record as the access API does and returns the token.
func newToken(t testing.TB, p *enrollv1.EnrollmentPolicy, expires time.Duration) (string, *enrollv1.JoinToken) {
	t.Helper()
	tok, err := jointoken.New()
	if err != nil {
		t.Fatal(err)
	}
	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: p.Namespace},
		Spec: enrollv1.JoinTokenSpec{Policy: p.Name, SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(expires).Truncate(time.Second))},
	}
	if err := k8s.Create(context.Background(), jt); err != nil {
		t.Fatal(err)
	}
	// The server reads tokens from its cache.
	waitFor(t, func() bool {
		var got enrollv1.JoinToken
		return reader.Get(context.Background(), client.ObjectKeyFromObject(jt), &got) == nil
	})
	return tok.String(), jt
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// httpClient trusts the test CA and presents cert when given.
func httpClient(cert *tls.Certificate) *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(testCA.ca.CertPEM())
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// post sends body as JSON and decodes a 2xx answer into out; it returns the
// status and, for any other status, the decoded error.
func post(t testing.TB, c *http.Client, url string, body, out any) (int, *enrollapi.Error) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 == 2 {
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				t.Fatalf("decoding %s: %v", url, err)
			}
		}
		return resp.StatusCode, nil
	}
	var e enrollapi.Error
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("a %d answer that is not an enrollapi.Error", resp.StatusCode)
	}
	return resp.StatusCode, &e
}

// csrPEM returns a CSR signed by key, shaped by tmpl.
func csrPEM(t testing.TB, key *ecdsa.PrivateKey, tmpl *x509.CertificateRequest) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func workloadCSR(t testing.TB, key *ecdsa.PrivateKey, id string) string {
	return uriCSR(t, key, enrollapi.WorkloadURI(id))
}

// uriCSR returns a CSR signed by key whose only SAN is uri.
func uriCSR(t testing.TB, key *ecdsa.PrivateKey, uri *url.URL) string {
	return csrPEM(t, key, &x509.CertificateRequest{URIs: []*url.URL{uri}})
}

// enrolled is a workload that went through both steps.
type enrolled struct {
	uuid, namespace string
	// uri is the workload URI the server named at step 1.
	uri  *url.URL
	key  *ecdsa.PrivateKey
	resp enrollapi.CertificateResponse
	cert *x509.Certificate
}

func (e *enrolled) tlsCert() *tls.Certificate {
	return &tls.Certificate{Certificate: [][]byte{e.cert.Raw}, PrivateKey: e.key, Leaf: e.cert}
}

// register runs step 1 with token and fails the test on a refusal.
func register(t testing.TB, base, token string) enrollapi.EnrollResponse {
	t.Helper()
	var step1 enrollapi.EnrollResponse
	if status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token}, &step1); e != nil {
		t.Fatalf("step 1: %d %s", status, e)
	}
	return step1
}

// enroll runs both steps and fails the test on any refusal.
func enroll(t testing.TB, base, token string, labels map[string]string) *enrolled {
	t.Helper()
	c := httpClient(nil)
	var step1 enrollapi.EnrollResponse
	if status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: token, Hostname: "vm-1.example.org", Labels: labels}, &step1); e != nil {
		t.Fatalf("step 1: %d %s", status, e)
	}
	key := testpki.Key(t)
	uri, err := url.Parse(step1.URI)
	if err != nil {
		t.Fatalf("step 1 named the URI %q: %v", step1.URI, err)
	}
	out := &enrolled{uuid: step1.UUID, namespace: step1.Namespace, uri: uri, key: key}
	if status, e := post(t, c, base+enrollapi.PathCertificate(step1.UUID), enrollapi.CertificateRequest{Token: token, CSR: uriCSR(t, key, uri)}, &out.resp); e != nil {
		t.Fatalf("step 2: %d %s", status, e)
	}
	out.cert = parseCert(t, out.resp.Certificate)
	return out
}

// renew renews w with cert and a new CSR of the same key for w.uri.
func renew(t testing.TB, base string, w *enrolled, cert *tls.Certificate) (int, *enrollapi.Error, *enrollapi.CertificateResponse) {
	t.Helper()
	return renewWith(t, base, w, cert, enrollapi.RenewalRequest{CSR: uriCSR(t, w.key, w.uri)})
}

// renewWith renews w presenting cert, with the renewal request req.
func renewWith(t testing.TB, base string, w *enrolled, cert *tls.Certificate, req enrollapi.RenewalRequest) (int, *enrollapi.Error, *enrollapi.CertificateResponse) {
	t.Helper()
	var resp enrollapi.CertificateResponse
	status, e := post(t, httpClient(cert), base+enrollapi.PathRenewal(w.uuid), req, &resp)
	return status, e, &resp
}

func parseCert(t testing.TB, s string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		t.Fatal("no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func getWorkload(t testing.TB, ns, id string) *enrollv1.Workload {
	t.Helper()
	var w enrollv1.Workload
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &w); err != nil {
		t.Fatal(err)
	}
	return &w
}

func getToken(t testing.TB, jt *enrollv1.JoinToken) *enrollv1.JoinToken {
	t.Helper()
	var got enrollv1.JoinToken
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(jt), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// expectRefused asserts a refusal's status and reason.
// tokenWithUses returns the token once its status counts want uses (the
// server writes them every TokenUseFlush), or as it is after 5s.
func tokenWithUses(t testing.TB, jt *enrollv1.JoinToken, want int64) *enrollv1.JoinToken {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := getToken(t, jt)
		if got.Status.Uses == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func expectRefused(t testing.TB, what string, status int, e *enrollapi.Error, wantStatus int, wantReason string) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: accepted (%d), want %d %s", what, status, wantStatus, wantReason)
	}
	if status != wantStatus || e.Reason != wantReason || strings.TrimSpace(e.Message) == "" {
		t.Fatalf("%s: got %d %s %q, want %d %s with a message", what, status, e.Reason, e.Message, wantStatus, wantReason)
	}
}

func keyOf(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }
