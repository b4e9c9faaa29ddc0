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
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

const (
	testUUID     = "6f1c2b9a-3e4d-4a5b-8c7d-9e0f1a2b3c4d"
	bundleSecret = "issuer-ca"
)

// newNamespace creates a namespace with the issuer's CA Secret.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := env.NewNamespace(t)
	env.NewSecret(t, ns, bundleSecret, nil, nil, map[string][]byte{"ca.crt": issuer.pki.rootPEM, "tls.crt": issuer.pki.rootPEM})
	return ns
}

func newCA(t *testing.T, ns, issuerName string, mutate func(*Options)) *CA {
	t.Helper()
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	opts := NewOptions()
	opts.Namespace = ns
	opts.IssuerName = issuerName
	opts.BundleName = bundleSecret
	if mutate != nil {
		mutate(&opts)
	}
	authority, err := New(opts, c)
	if err != nil {
		t.Fatal(err)
	}
	return authority
}

// newRequest is what the enrollment server passes: a checked CSR whose only SAN is the workload URI.
func newRequest(t *testing.T, ttl time.Duration) ca.SigningRequest {
	t.Helper()
	key := testpki.Key(t)
	uri := enrollapi.WorkloadURI(testUUID)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{URIs: []*url.URL{uri}}, key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	return ca.SigningRequest{CSR: der, PublicKey: key.Public(), URI: uri, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(ttl)}
}

// remainingRequests lists the CertificateRequests left in ns.
func remainingRequests(t *testing.T, ns string) int {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(CertificateRequestGVK.GroupVersion().WithKind("CertificateRequestList"))
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing CertificateRequests: %v", err)
	}
	return len(list.Items)
}

// onlyRequestSpec returns the spec of the one CertificateRequest the issuer saw in ns.
func onlyRequestSpec(t *testing.T, ns string) map[string]any {
	t.Helper()
	issuer.mu.Lock()
	defer issuer.mu.Unlock()
	var found []map[string]any
	for k, spec := range issuer.seen {
		if strings.HasPrefix(k, ns+"/") {
			found = append(found, spec)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the issuer saw %d CertificateRequests in %s, want 1", len(found), ns)
	}
	return found[0]
}

func noSecretMaterial(g Gomega, err error) {
	g.Expect(err.Error()).NotTo(ContainSubstring("-----BEGIN"))
}

func TestASignedCertificateVerifiesAgainstTheBundle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerSigner, nil)
	req := newRequest(t, 24*time.Hour)

	issued, err := authority.Sign(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	leaf := issued.Certificate
	g.Expect(leaf.URIs).To(HaveLen(1))
	g.Expect(leaf.URIs[0].String()).To(Equal("credo://workload/" + testUUID))
	g.Expect(leaf.DNSNames).To(BeEmpty())
	g.Expect(leaf.IPAddresses).To(BeEmpty())
	g.Expect(issued.ChainPEM).To(BeEmpty(), "status.ca is the bundle root: no chain")
	block, _ := pem.Decode(issued.CertificatePEM)
	g.Expect(block.Bytes).To(Equal(leaf.Raw))

	bundle, err := authority.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle).To(Equal(issuer.pki.rootPEM))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(leaf.NotAfter.Sub(leaf.NotBefore)).To(BeNumerically("~", req.NotAfter.Sub(req.NotBefore), time.Second))

	// What the issuer was asked.
	spec := onlyRequestSpec(t, ns)
	g.Expect(spec["duration"]).To(Equal((24*time.Hour + time.Minute).String()))
	g.Expect(spec["usages"]).To(ConsistOf("client auth", "server auth", "digital signature"))
	g.Expect(spec["issuerRef"]).To(Equal(map[string]any{"name": issuerSigner, "kind": "Issuer", "group": "cert-manager.io"}))
	csrPEM, err := base64.StdEncoding.DecodeString(spec["request"].(string))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(csrPEM).To(Equal(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: req.CSR})))

	g.Expect(remainingRequests(t, ns)).To(Equal(0), "the CertificateRequest is deleted")
}

func TestAnIntermediateComesBackAsTheChain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerChainSigner, nil)

	issued, err := authority.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	chain, err := parseCerts(issued.ChainPEM)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(chain).To(HaveLen(1))
	g.Expect(chain[0].Equal(issuer.pki.intermediate)).To(BeTrue(), "the chain is the intermediate, not the bundle root")
	g.Expect(issued.Certificate.CheckSignatureFrom(issuer.pki.intermediate)).To(Succeed())
}

func TestTheBundleCanComeFromAConfigMap(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trust"},
		Data: map[string]string{"root.pem": string(issuer.pki.rootPEM)}}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	authority := newCA(t, ns, issuerSigner, func(o *Options) {
		o.BundleKind, o.BundleName, o.BundleKey = BundleFromConfigMap, "trust", "root.pem"
	})
	bundle, err := authority.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle).To(Equal(issuer.pki.rootPEM))
	_, err = authority.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
}

func TestAMissingBundleIsUnavailable(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerSigner, func(o *Options) { o.BundleName = "absent" })
	_, err := authority.Bundle(context.Background())
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
	_, err = authority.Sign(context.Background(), newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
	g.Expect(remainingRequests(t, ns)).To(Equal(0), "nothing is asked of the issuer without a bundle")
}

func TestADeniedRequestIsAnErrorWithTheReason(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerDenier, nil)

	_, err := authority.Sign(context.Background(), newRequest(t, time.Hour))
	var ie *IssuerError
	g.Expect(errors.As(err, &ie)).To(BeTrue(), "got %v", err)
	g.Expect(ie.Condition).To(Equal("Denied"))
	g.Expect(ie.Reason).To(Equal("PolicyDenied"))
	g.Expect(err.Error()).To(ContainSubstring(deniedMessage))
	g.Expect(err).NotTo(MatchError(ca.ErrUnavailable))
	noSecretMaterial(g, err)
	g.Expect(remainingRequests(t, ns)).To(Equal(0))
}

func TestAFailedRequestIsAnErrorWithTheReason(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerFailer, nil)

	_, err := authority.Sign(context.Background(), newRequest(t, time.Hour))
	var ie *IssuerError
	g.Expect(errors.As(err, &ie)).To(BeTrue(), "got %v", err)
	g.Expect(ie.Condition).To(Equal("Failed"))
	g.Expect(err.Error()).To(ContainSubstring(failedMessage))
	g.Expect(remainingRequests(t, ns)).To(Equal(0))
}

func TestAnIssuerThatAddsADNSNameIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerSANAdder, nil)

	_, err := authority.Sign(context.Background(), newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ErrRefused))
	g.Expect(err.Error()).To(ContainSubstring("added subject alternative names"))
	g.Expect(err.Error()).To(ContainSubstring("DNS:extra.example.org"))
	g.Expect(err).NotTo(MatchError(ca.ErrUnavailable))
	noSecretMaterial(g, err)
	g.Expect(remainingRequests(t, ns)).To(Equal(0))
}

func TestAnIssuerThatSignsAnotherKeyIsRefused(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerKeySwapper, nil)

	_, err := authority.Sign(context.Background(), newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ErrRefused))
	g.Expect(err.Error()).To(ContainSubstring("public key is not the CSR's"))
}

func TestASilentIssuerTimesOutAsUnavailable(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	authority := newCA(t, ns, issuerSilent, func(o *Options) { o.Timeout = time.Second })

	start := time.Now()
	_, err := authority.Sign(context.Background(), newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
	g.Expect(err.Error()).To(ContainSubstring("did not answer"))
	g.Expect(time.Since(start)).To(BeNumerically(">=", time.Second))
	g.Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))
	g.Expect(remainingRequests(t, ns)).To(Equal(0), "the unanswered request is deleted too")
}
