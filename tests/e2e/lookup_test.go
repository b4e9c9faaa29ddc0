//go:build e2e

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

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
	"github.com/credo-dev/credo/pkg/lookup"
)

// e2eLookupMaxAge is the enrollment-controller's --lookup-max-age in the
// lookup test: the bound within which a relying service stops honouring a
// removed label, beside the watch lag.
const e2eLookupMaxAge = 3 * time.Second

// stateCertificate reads an agent's current certificate and key from its
// state directory, as a service beside the agent does (the agent writes
// each file atomically; a key and a certificate of two renewals are told
// apart by tls.X509KeyPair, and read again).
func (a *agent) stateCertificate() (*tls.Certificate, error) {
	var err error
	for range 20 {
		var certPEM, keyPEM []byte
		if certPEM, err = os.ReadFile(filepath.Join(a.dir, "state", "cert.pem")); err != nil {
			return nil, err
		}
		if keyPEM, err = os.ReadFile(filepath.Join(a.dir, "state", "key.pem")); err != nil {
			return nil, err
		}
		var c tls.Certificate
		if c, err = tls.X509KeyPair(certPEM, keyPEM); err == nil {
			return &c, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// pool reads a PEM file into a certificate pool.
func pool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", path)
	}
	return p
}

// Seed 001: "Cert = authentication; registry = authorization." Workload A
// is a relying service: it serves HTTPS with its own workload certificate,
// verifies its peers' certificates against the enrollment CA, and admits
// only peers the registry labels role=frontend now, asking the real
// enrollment-controller's lookup (pkg/lookup's RequireLabel, presenting A's
// certificate; the platform binds credo-workload-lookup to A's policy).
// Workload B, labelled role=frontend at enrollment, is admitted; once the
// platform relabels it role=batch, it is refused within the answer's max
// age plus the watch lag, with the same certificate and no re-enrollment.
// Workload C, of the same policy as B but labelled role=batch, is refused
// throughout.
func TestOneWorkloadAuthorizesAnotherByLabelAndStopsWhenItIsRemoved(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	restartControllerWith(t, e, "enrollment-controller", fmt.Sprintf("--lookup-max-age=%s", e2eLookupMaxAge))
	ns := enrollmentNamespace(t, "enroll-e2e-lookup")
	for _, p := range []*enrollv1.EnrollmentPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "relying", Namespace: ns}},
		{ObjectMeta: metav1.ObjectMeta{Name: "clients", Namespace: ns}, Spec: enrollv1.EnrollmentPolicySpec{
			AllowedLabels: []enrollv1.LabelRule{{Key: "role", Values: []string{"frontend", "batch"}}}}},
	} {
		p.Spec.CertificateTTL, p.Spec.RenewalGrace = &metav1.Duration{Duration: time.Hour}, &metav1.Duration{Duration: time.Hour}
		if err := k8s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	caFile, _ := anchorFile(t, 1)
	a := newAgent(t, "relying-a", createToken(t, e, ns, "relying"), caFile)
	b := newAgent(t, "client-b", createToken(t, e, ns, "clients"), caFile, "--label=role=frontend")
	c := newAgent(t, "client-c", createToken(t, e, ns, "clients"), caFile, "--label=role=batch")
	for _, ag := range []*agent{a, b, c} {
		ag.start(t, e, true)
		ag.waitCert(t, nil, 30*time.Second)
	}
	bCert, _ := b.cert()
	if err := k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "relying-looks-up", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "credo-workload-lookup"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "credo:policy:" + ns + ":relying"}},
	}); err != nil {
		t.Fatal(err)
	}

	// A: the relying service.
	lc, err := lookup.New(lookup.Options{Endpoint: e.EnrollmentURL, Roots: pool(t, caFile), ClientCertificate: a.stateCertificate})
	if err != nil {
		t.Fatal(err)
	}
	bundle := pool(t, filepath.Join(a.dir, "state", "bundle.pem"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: lc.RequireLabel("role", "frontend")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := lookup.PeerFrom(r.Context())
			_, _ = fmt.Fprintf(w, "hello %s", p.UUID)
		})),
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return a.stateCertificate() },
			ClientCAs:      bundle,
			ClientAuth:     tls.RequireAndVerifyClientCert,
		},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	aCert, _ := a.cert()
	url := "https://" + ln.Addr().String() + "/orders"

	// call sends one request to A as the agent ag, on a new connection
	// presenting ag's current certificate, verifying that A is A.
	call := func(ag *agent) (int, string) {
		t.Helper()
		cfg := &tls.Config{
			MinVersion:           tls.VersionTLS12,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return ag.stateCertificate() },
			InsecureSkipVerify:   true, //nolint:gosec // verified below: A's workload certificate names no host
			VerifyConnection: func(cs tls.ConnectionState) error {
				leaf := cs.PeerCertificates[0]
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: bundle}); err != nil {
					return err
				}
				if len(leaf.URIs) != 1 || leaf.URIs[0].String() != aCert.URIs[0].String() {
					return errors.New("the server is not workload A")
				}
				return nil
			},
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatalf("%s calling A: %v", ag.name, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	if code, body := call(b); code != http.StatusOK || body != "hello "+uuidOf(bCert) {
		t.Fatalf("B, labelled role=frontend, calling A: %d %q", code, body)
	}
	if code, body := call(c); code != http.StatusForbidden {
		t.Fatalf("C, labelled role=batch, calling A: %d %q", code, body)
	}

	// The platform relabels B (it holds the verb relabel; its name in
	// changedBy); the enrollment-controller establishes the relabel.
	user, err := caller.Username(ctx, k8s)
	if err != nil {
		t.Fatal(err)
	}
	patchWorkload(t, ns, uuidOf(bCert), fmt.Sprintf(`{"spec":{"labels":{"role":"batch"},"changedBy":%q}}`, user))
	var wl enrollv1.Workload
	deadline := time.Now().Add(30 * time.Second)
	for k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuidOf(bCert)}, &wl) != nil || !maps.Equal(wl.Status.Labels, map[string]string{"role": "batch"}) {
		if time.Now().After(deadline) {
			t.Fatalf("the relabel of B is not established: status labels %v", wl.Status.Labels)
		}
		time.Sleep(100 * time.Millisecond)
	}
	established := time.Now()
	// Within the max age plus a watch lag, B is refused, and stays so.
	bound := e2eLookupMaxAge + 2*time.Second
	for {
		code, body := call(b)
		if code == http.StatusForbidden {
			break
		}
		if code != http.StatusOK {
			t.Fatalf("B calling A after its relabel: %d %q", code, body)
		}
		if time.Since(established) > bound {
			t.Fatalf("B, relabelled role=batch, is still admitted %s after the relabel was established (bound %s)", time.Since(established), bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("B refused %s after its relabel was established", time.Since(established).Round(10*time.Millisecond))
	for range 3 {
		if code, body := call(b); code != http.StatusForbidden {
			t.Fatalf("B admitted again after the refusal: %d %q", code, body)
		}
	}
	if now, _ := b.cert(); uuidOf(now) != uuidOf(bCert) {
		t.Fatal("B enrolled again; the relabel must not need it")
	}
}
