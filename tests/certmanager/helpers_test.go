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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/ca/certmanager"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/ports"
	"github.com/credo-dev/credo/tests/testenv/enrollmenttest"
	"github.com/credo-dev/credo/tests/testpki"
)

// issuerGVK is cert-manager's Issuer.
var issuerGVK = certmanager.CertificateRequestGVK.GroupVersion().WithKind("Issuer")

// caSecret is a CA issuer's Secret as cert-manager reads it: the CA's
// certificate and key, and ca.crt.
func caSecret(ns, name string, authority *testpki.Cert) *corev1.Secret {
	key, err := authority.KeyPEM()
	if err != nil {
		panic(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey: authority.CertPEM(), corev1.TLSPrivateKeyKey: key, "ca.crt": authority.CertPEM(),
		},
	}
}

// newCAIssuer creates the CA Issuer name in ns, signing with the CA of the
// Secret secretName (which may not exist yet).
func newCAIssuer(g Gomega, ns, name, secretName string) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"ca": map[string]any{"secretName": secretName}},
	}}
	u.SetGroupVersionKind(issuerGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
}

// issuerReady waits until cert-manager says the Issuer is Ready.
func issuerReady(g Gomega, ns, name string) {
	g.Eventually(func() string {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(issuerGVK)
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				return m["status"].(string)
			}
		}
		return "no Ready condition"
	}, time.Minute, 200*time.Millisecond).Should(Equal("True"), "cert-manager makes the Issuer Ready")
}

// certificateRequests lists the CertificateRequests of ns.
func certificateRequests(g Gomega, ns string) []unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(certmanager.CertificateRequestGVK.GroupVersion().WithKind("CertificateRequestList"))
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

// controller is an enrollment-controller the test started.
type controller struct {
	// base is the listener's URL; roots trust its serving certificate.
	base  string
	roots *x509.CertPool
	// stop stops it before the test ends.
	stop func()
}

// startController runs the enrollment-controller as
// cmd/enrollment-controller builds it (enrollmenttest.Start)
// in namespace ns (--namespace), signing through cert-manager with args (or
// as args say); the listener serves a certificate of a test CA from files.
// It stops when the test ends, or at c.stop. tweak changes the options
// flags do not reach.
func startController(t *testing.T, ns string, args []string, tweak func(*enrollment.ListenerOptions)) *controller {
	t.Helper()
	serving := testpki.Authority(t, "enrollment listener CA")
	leaf := testpki.Leaf(t, serving, testpki.Serving())
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, leaf.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, testpki.KeyPEM(t, leaf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, err := ports.Addr()
	if err != nil {
		t.Fatal(err)
	}
	stop := enrollmenttest.Start(t, env.Config, append([]string{"--certificate-authority=cert-manager",
		"--namespace=" + ns, "--enrollment-addr=" + addr,
		"--enrollment-tls-cert-file=" + certFile, "--enrollment-tls-key-file=" + keyFile}, args...), tweak)
	roots := x509.NewCertPool()
	roots.AddCert(serving.Cert)
	c := &controller{base: "https://" + addr, roots: roots, stop: stop}
	NewWithT(t).Eventually(func() error {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		if err == nil {
			_ = conn.Close()
		}
		return err
	}, time.Minute, 100*time.Millisecond).Should(Succeed(), "the listener answers")
	return c
}

// newToken records a join token of a new policy of ns, as the access API
// does, and returns its plaintext.
func newToken(t *testing.T, ns string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: ns}})).To(Succeed())
	tok, err := jointoken.New()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: "agents", SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))},
	})).To(Succeed())
	return tok.String()
}

// post posts in as JSON to the listener; a 2xx answer is decoded into out,
// any other is returned as the server's error with its status.
func (c *controller) post(path string, in, out any) (int, *enrollapi.Error) {
	body, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: c.roots, MinVersion: tls.VersionTLS12}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(c.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, &enrollapi.Error{Reason: "connection", Message: err.Error()}
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		var e enrollapi.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, &e
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, &enrollapi.Error{Reason: "decoding", Message: err.Error()}
	}
	return resp.StatusCode, nil
}

// pool is a pool of the certificates.
func pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// verifiesAgainst checks that leaf chains to authority for client
// authentication.
func verifiesAgainst(g Gomega, leaf *x509.Certificate, authority *testpki.Cert) {
	g.Expect(leaf).NotTo(BeNil())
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool(authority.Cert), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred(), "signed by the Issuer's CA")
}

// leafOf is the agent's current certificate.
func leafOf(g Gomega, agent *enrolldriver.Agent) *x509.Certificate {
	leaf, err := agent.Leaf()
	g.Expect(err).NotTo(HaveOccurred())
	return leaf
}
