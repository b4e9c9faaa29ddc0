//go:build pkcs11

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

package pkcs11

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/ca/pkcs11"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testenv/enrollmenttest"
)

const (
	// overlap is the enrollment-controller's --enrollment-ca-overlap:
	// short, so that the old CA is seen leaving the bundle and the token.
	overlap = 45 * time.Second
	// wait bounds each Eventually.
	wait = 90 * time.Second
)

// The enrollment-controller, run from its flags with its CA's key in the
// token: the token holds the key, sensitive and never extractable; the CA
// Secret holds certificates only; an enrollment's certificate verifies
// against the projection of the published anchor; a rotation generates
// the new key in the token and the anchor carries old and new for the
// overlap, while agents of either bundle enroll and renew; then the old CA
// leaves the bundle and its key the token. No Secret of the cluster holds
// a private key, and no Secret, event or status the PIN.
func TestTheEnrollmentCAKeyNeverLeavesTheToken(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	system, tenant := env.NewNamespace(t), env.NewNamespace(t)
	addr := testenv.FreeAddr(t)
	base := "https://" + addr
	enrollmenttest.Start(t, env.Config, []string{"--namespace=" + system, "--enrollment-addr=" + addr, "--enrollment-hosts=127.0.0.1",
		"--" + pkcs11.FlagModule + "=" + module, "--" + pkcs11.FlagTokenLabel + "=" + tokenLabel, "--" + pkcs11.FlagPINFile + "=" + pinFile,
		"--enrollment-ca-overlap=" + overlap.String(), "--max-certificate-ttl=30s", "--max-renewal-grace=10s"}, nil)
	token := openToken(t)

	// The anchor is published, and its projection holds the CA of the token's key.
	first := projected(g, system, 1)[0]
	keys := tokenKeys(g, token)
	g.Expect(keys).To(HaveLen(1))
	g.Expect(keys[0].ID).To(Equal(first.SubjectKeyId), "the CA's key is the token's, found by the certificate's SKI")
	g.Expect(keys[0].Sensitive).To(BeTrue())
	g.Expect(keys[0].Extractable).To(BeFalse())
	g.Expect(keys[0].NeverExtractable).To(BeTrue())
	caSecret := secret(g, system, embedded.DefaultSecretName)
	g.Expect(caSecret.Data).To(HaveKey(corev1.TLSCertKey))
	g.Expect(caSecret.Data).NotTo(HaveKey(corev1.TLSPrivateKeyKey))
	expectNoPrivateKeyAnywhere(g)

	// An agent trusting the projection enrolls; its certificate verifies against it.
	policy := &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: tenant},
		Spec: enrollv1.EnrollmentPolicySpec{CertificateTTL: &metav1.Duration{Duration: 30 * time.Second},
			RenewalGrace: &metav1.Duration{Duration: 10 * time.Second}}}
	g.Expect(env.Client.Create(ctx, policy)).To(Succeed())
	tok := newJoinToken(t, tenant, policy.Name)
	before := enrollAgent(g, projectedPool(g, system), base, tok)
	leaf := leafOf(g, before)
	g.Expect(leaf.AuthorityKeyId).To(Equal(first.SubjectKeyId))
	g.Expect(verify(leaf, projectedPool(g, system))).To(Succeed())

	// A rotation: the new key is generated in the token, the anchor carries both.
	patch := client.MergeFrom(caSecret.DeepCopy())
	metav1.SetMetaDataAnnotation(&caSecret.ObjectMeta, embedded.AnnotationRotateRequestedAt, time.Now().UTC().Format(time.RFC3339))
	g.Expect(env.Client.Patch(ctx, caSecret, patch)).To(Succeed())
	var both []*x509.Certificate
	g.Eventually(func(g Gomega) {
		touch(base) // a handshake lets a replica see the request within its refresh period
		both = projectedNow(g, system)
		g.Expect(both).To(HaveLen(2))
	}, wait, time.Second).Should(Succeed())
	second := both[0]
	g.Expect(both[1].Raw).To(Equal(first.Raw), "the old CA stays in the anchor for the overlap")
	g.Expect(second.SubjectKeyId).NotTo(Equal(first.SubjectKeyId))
	keys = tokenKeys(g, token)
	g.Expect(keys).To(HaveLen(2))
	g.Expect([][]byte{keys[0].ID, keys[1].ID}).To(ConsistOf(first.SubjectKeyId, second.SubjectKeyId))
	for _, k := range keys {
		g.Expect(k.Sensitive && !k.Extractable && k.NeverExtractable).To(BeTrue(), "key %x", k.ID)
	}
	g.Expect(secret(g, system, embedded.DefaultSecretName).Data).NotTo(HaveKey(embedded.KeyPreviousKeys))
	expectNoPrivateKeyAnywhere(g)

	// A new agent trusting both enrolls under the new CA; the agent of the
	// old bundle still verifies the server (its certificate is the old
	// CA's for the overlap) and renews under the new one.
	after := enrollAgent(g, projectedPool(g, system), base, tok)
	g.Expect(leafOf(g, after).AuthorityKeyId).To(Equal(second.SubjectKeyId))
	g.Expect(verify(leafOf(g, after), projectedPool(g, system))).To(Succeed())
	g.Expect(verify(leaf, projectedPool(g, system))).To(Succeed(), "certificates of the old CA verify for the overlap")
	g.Expect(before.Renew(base)).To(Succeed())
	g.Expect(leafOf(g, before).AuthorityKeyId).To(Equal(second.SubjectKeyId))

	// The overlap ends: the old CA leaves the anchor, and its key the
	// token; an agent trusting the new CA alone verifies the server.
	g.Eventually(func(g Gomega) {
		g.Expect(projectedNow(g, system)).To(ConsistOf(HaveField("Raw", second.Raw)))
		g.Expect(tokenKeys(g, token)).To(ConsistOf(HaveField("ID", second.SubjectKeyId)))
	}, wait, time.Second).Should(Succeed())
	last := enrollAgent(g, projectedPool(g, system), base, tok)
	g.Expect(leafOf(g, last).AuthorityKeyId).To(Equal(second.SubjectKeyId))

	expectNoPrivateKeyAnywhere(g)
	expectNoPINAnywhere(g, system, tenant)
}

// openToken opens the token as a second session, to look at its keys.
func openToken(t *testing.T) *pkcs11.Token {
	t.Helper()
	token, err := pkcs11.Open(pkcs11.Options{Module: module, TokenLabel: tokenLabel, PINFile: pinFile, KeyLabel: pkcs11.DefaultKeyLabel})
	if err != nil {
		t.Fatalf("opening the token: %v", err)
	}
	t.Cleanup(func() { _ = token.Close() })
	return token
}

func tokenKeys(g Gomega, token *pkcs11.Token) []pkcs11.KeyInfo {
	keys, err := token.Keys()
	g.Expect(err).NotTo(HaveOccurred())
	return keys
}

func secret(g Gomega, ns, name string) *corev1.Secret {
	var s corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

// projected waits for the projection of the anchor credo in ns to hold n
// certificates, and returns them.
func projected(g Gomega, ns string, n int) []*x509.Certificate {
	var certs []*x509.Certificate
	g.Eventually(func(g Gomega) {
		certs = projectedNow(g, ns)
		g.Expect(certs).To(HaveLen(n))
	}, wait, 200*time.Millisecond).Should(Succeed())
	return certs
}

// projectedNow returns the certificates of the projection of the anchor
// credo in ns.
func projectedNow(g Gomega, ns string) []*x509.Certificate {
	var s corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: trustv1.ProjectionName("credo")}, &s)).To(Succeed())
	var certs []*x509.Certificate
	for rest := s.Data["ca.crt"]; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return certs
		}
		c, err := x509.ParseCertificate(b.Bytes)
		g.Expect(err).NotTo(HaveOccurred())
		certs = append(certs, c)
	}
}

func projectedPool(g Gomega, ns string) *x509.CertPool {
	var s corev1.Secret
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: trustv1.ProjectionName("credo")}, &s)).To(Succeed())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(s.Data["ca.crt"])).To(BeTrue())
	return pool
}

// newJoinToken records a join token of policy, as the access API does,
// and returns its plaintext.
func newJoinToken(t *testing.T, ns, policy string) string {
	t.Helper()
	tok, err := jointoken.New()
	if err != nil {
		t.Fatal(err)
	}
	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: policy, SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), jt)).To(Succeed())
	return tok.String()
}

// enrollAgent enrolls a new agent trusting roots, once the server answers.
func enrollAgent(g Gomega, roots *x509.CertPool, base, token string) *enrolldriver.Agent {
	a, err := enrolldriver.NewAgent(roots)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error { return a.Enroll(base, token) }, wait, 500*time.Millisecond).Should(Succeed())
	return a
}

func leafOf(g Gomega, a *enrolldriver.Agent) *x509.Certificate {
	leaf, err := a.Leaf()
	g.Expect(err).NotTo(HaveOccurred())
	return leaf
}

// verify verifies leaf's chain to roots, within leaf's lifetime (the
// test's certificates live 30 seconds).
func verify(leaf *x509.Certificate, roots *x509.CertPool) error {
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		CurrentTime: leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)})
	return err
}

// touch makes one TLS handshake with the listener, verifying nothing.
func touch(base string) {
	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only wakes the server
	if err == nil {
		_ = conn.Close()
	}
}

// expectNoPrivateKeyAnywhere reads every Secret of the cluster: no value
// is or holds a private key, PEM or DER, or the PIN.
func expectNoPrivateKeyAnywhere(g Gomega) {
	var list corev1.SecretList
	g.Expect(env.Client.List(context.Background(), &list)).To(Succeed())
	g.Expect(list.Items).NotTo(BeEmpty())
	for _, s := range list.Items {
		for k, v := range s.Data {
			where := s.Namespace + "/" + s.Name + " " + k
			g.Expect(bytes.Contains(v, []byte("PRIVATE KEY"))).To(BeFalse(), where)
			g.Expect(bytes.Contains(v, []byte(testPIN))).To(BeFalse(), where)
			g.Expect(isPrivateKey(v)).To(BeFalse(), where)
			for rest := v; ; {
				var b *pem.Block
				if b, rest = pem.Decode(rest); b == nil {
					break
				}
				g.Expect(isPrivateKey(b.Bytes)).To(BeFalse(), where)
			}
		}
	}
}

// isPrivateKey says whether der parses as a private key of any encoding.
func isPrivateKey(der []byte) bool {
	if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParseECPrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParsePKCS1PrivateKey(der)
	return err == nil
}

// expectNoPINAnywhere reads every event and object with a status of the
// namespaces, and the logs: none holds the PIN or key material.
func expectNoPINAnywhere(g Gomega, namespaces ...string) {
	ctx := context.Background()
	for _, ns := range namespaces {
		lists := []client.ObjectList{&corev1.EventList{}, &eventsv1.EventList{},
			&trustv1.TrustAnchorList{}, &enrollv1.EnrollmentPolicyList{}, &enrollv1.JoinTokenList{}, &enrollv1.WorkloadList{}}
		for _, l := range lists {
			g.Expect(env.Client.List(ctx, l, client.InNamespace(ns))).To(Succeed())
			out, err := json.Marshal(l)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(out)).NotTo(ContainSubstring(testPIN), "%T in %s", l, ns)
			g.Expect(string(out)).NotTo(ContainSubstring("PRIVATE KEY"), "%T in %s", l, ns)
		}
	}
	g.Expect(env.Logs.String()).NotTo(ContainSubstring(testPIN))
	g.Expect(env.Logs.String()).NotTo(ContainSubstring("PRIVATE KEY"))
}
