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

package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	fluxevents "github.com/fluxcd/pkg/runtime/events"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollmentv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// newRequest is a signing request for a fresh key, as the enrollment server passes it.
func newRequest(t *testing.T, ttl time.Duration) ca.SigningRequest {
	t.Helper()
	key := testpki.Key(t)
	now := time.Now().Truncate(time.Second)
	return ca.SigningRequest{PublicKey: key.Public(), URI: enrollapi.WorkloadURI(testUUID),
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(ttl)}
}

// bundleCerts parses a PEM bundle.
func bundleCerts(t *testing.T, pemData []byte) []*x509.Certificate {
	t.Helper()
	as, err := parseCertificates(pemData)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*x509.Certificate, 0, len(as))
	for _, a := range as {
		out = append(out, a.cert)
	}
	return out
}

func fingerprints(certs []*x509.Certificate) []string {
	out := make([]string, 0, len(certs))
	for _, c := range certs {
		out = append(out, fingerprint(c.Raw))
	}
	return out
}

// issuerOf returns the fingerprint of the CA among cas that signed cert.
func issuerOf(cert *x509.Certificate, cas ...*x509.Certificate) string {
	for _, c := range cas {
		if cert.CheckSignatureFrom(c) == nil {
			return fingerprint(c.Raw)
		}
	}
	return "none"
}

// verifyAgainst verifies leaf for client authentication against the bundle.
func verifyAgainst(leaf *x509.Certificate, bundle []byte, usage x509.ExtKeyUsage) error {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(bundle)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

func requestRotation(t *testing.T, ns, value string) {
	t.Helper()
	s := getSecret(t, ns)
	patch := client.MergeFrom(s.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, AnnotationRotateRequestedAt, value)
	if err := env.Client.Patch(context.Background(), s, patch); err != nil {
		t.Fatalf("requesting a rotation: %v", err)
	}
}

func TestFirstStartCreatesASecretWithoutTheLabelLeg(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, func(o *Options) { o.LabelDomain = "example.org"; o.Release = "platform" })

	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s := getSecret(t, ns)
	g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(slices.Sorted(func(yield func(string) bool) {
		for k := range s.Data {
			if !yield(k) {
				return
			}
		}
	})).To(Equal([]string{"ca.crt", "tls.crt", "tls.key"}))
	g.Expect(s.Labels).To(BeEmpty(), "published by a TrustAnchor (Anchor), not by the label leg")
	g.Expect(s.Annotations).To(BeEmpty())
	g.Expect(s.Data["ca.crt"]).To(Equal(s.Data["tls.crt"]))
	cas := bundleCerts(t, s.Data["ca.crt"])
	g.Expect(cas).To(HaveLen(1))
	g.Expect(cas[0].Subject.CommonName).To(Equal("credo enrollment CA"))
	g.Expect(cas[0].IsCA).To(BeTrue())

	bundle, err := a.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bundle).To(Equal(s.Data["ca.crt"]))

	// A second start changes nothing.
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(getSecret(t, ns).ResourceVersion).To(Equal(s.ResourceVersion))
}

// The labels an earlier version published the CA by, on the label leg,
// are removed (the TrustAnchor publishes it); other labels are kept.
func TestTheLabelLegOfAnEarlierVersionIsRemoved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, func(o *Options) { o.LabelDomain = "example.org" })
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s := getSecret(t, ns)
	s.Labels = map[string]string{"example.org/publish-ca-cert": "true", "example.org/publish-ca-cert-release": "credo", "team": "platform"}
	s.Annotations = map[string]string{"example.org/publish-ca-cert-key": "ca.crt"}
	g.Expect(env.Client.Update(ctx, s)).To(Succeed())

	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s = getSecret(t, ns)
	g.Expect(s.Labels).To(Equal(map[string]string{"team": "platform"}))
	g.Expect(s.Annotations).To(BeEmpty())
}

func TestReplicasStartingAtOnceEndWithOneCA(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const replicas = 5
	instances := make([]*instance, replicas)
	for i := range instances {
		instances[i] = newInstance(t, ns, nil, nil)
	}
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	start := make(chan struct{})
	for i, in := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = in.Reconcile(ctx)
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	s := getSecret(t, ns)
	g.Expect(bundleCerts(t, s.Data["ca.crt"])).To(HaveLen(1))
	want := fingerprint(bundleCerts(t, s.Data["tls.crt"])[0].Raw)
	for i, in := range instances {
		bundle, err := in.Bundle(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bundle).To(Equal(s.Data["ca.crt"]), "replica %d", i)
		issued, err := in.Sign(ctx, newRequest(t, time.Hour))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(issuerOf(issued.Certificate, bundleCerts(t, bundle)...)).To(Equal(want), "replica %d", i)
	}
}

func TestSignIssuesACertificateThatVerifiesAgainstTheBundle(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())

	req := newRequest(t, 24*time.Hour)
	issued, err := a.Sign(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issued.ChainPEM).To(BeEmpty())
	leaf := issued.Certificate
	g.Expect(bundleCerts(t, issued.CertificatePEM)[0].Raw).To(Equal(leaf.Raw))

	bundle, err := a.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(verifyAgainst(leaf, bundle, x509.ExtKeyUsageClientAuth)).To(Succeed())
	g.Expect(verifyAgainst(leaf, bundle, x509.ExtKeyUsageServerAuth)).To(Succeed())
	g.Expect(leaf.URIs).To(HaveLen(1))
	g.Expect(leaf.URIs[0].String()).To(Equal("credo://workload/" + testUUID))
	g.Expect(leaf.DNSNames).To(BeEmpty())
	g.Expect(leaf.IPAddresses).To(BeEmpty())
	g.Expect(leaf.EmailAddresses).To(BeEmpty())
	g.Expect(leaf.NotBefore).To(BeTemporally("==", req.NotBefore))
	g.Expect(leaf.NotAfter).To(BeTemporally("==", req.NotAfter))
	g.Expect(leaf.ExtKeyUsage).To(ConsistOf(x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth))
	g.Expect(leaf.IsCA).To(BeFalse())
	g.Expect(publicKeysEqual(leaf.PublicKey, req.PublicKey)).To(BeTrue())

	other, err := a.Sign(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(other.Certificate.SerialNumber).NotTo(Equal(leaf.SerialNumber))
}

func TestSignMakesNoAPICallWhileTheCacheIsFresh(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())

	before := a.reader.reads.Load()
	for range 200 {
		_, err := a.Sign(ctx, newRequest(t, time.Hour))
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(a.reader.reads.Load()).To(Equal(before), "no read while the cache is fresh")

	a.clock.advance(DefaultRefreshAfter + time.Second)
	for range 10 {
		_, err := a.Sign(ctx, newRequest(t, time.Hour))
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(a.reader.reads.Load()).To(Equal(before+1), "one read once the cache is stale")

	// An API outage does not stop signing with the cached CA.
	a.reader.fail.Store(true)
	a.clock.advance(DefaultRefreshAfter + time.Second)
	_, err := a.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.reader.reads.Load()).To(Equal(before + 2))

	// Without a cache, the outage is ErrUnavailable.
	cold := newInstance(t, ns, nil, nil)
	cold.reader.fail.Store(true)
	_, err = cold.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
}

func TestRotationByAnnotationKeepsTheOldCATrustedForTheOverlap(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const overlap = 4 * time.Second
	recorder := fluxevents.NewFakeRecorder(10, false)
	a := newInstance(t, ns, recorder, func(o *Options) { o.Overlap = overlap })
	b := newInstance(t, ns, nil, func(o *Options) { o.Overlap = overlap; o.RefreshAfter = 200 * time.Millisecond })
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(b.Reconcile(ctx)).To(Succeed())
	oldCA := bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0]
	oldFP := fingerprint(oldCA.Raw)
	hosts := []string{"enroll.example.org", "127.0.0.1"}
	serve := a.GetCertificate(hosts)
	served, err := serve(&tls.ClientHelloInfo{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(served.Leaf, oldCA)).To(Equal(oldFP))

	requestRotation(t, ns, "2026-12-03T07:00:00Z")
	rotatedAt := time.Now()
	g.Expect(a.Reconcile(ctx)).To(Succeed())

	s := getSecret(t, ns)
	newCA := bundleCerts(t, s.Data["tls.crt"])[0]
	newFP := fingerprint(newCA.Raw)
	g.Expect(newFP).NotTo(Equal(oldFP))
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(Equal([]string{newFP, oldFP}))
	g.Expect(s.Data).To(HaveKey(KeyPreviousKeys))
	g.Expect(s.Data).To(HaveLen(4))
	g.Expect(s.Annotations).To(HaveKeyWithValue(AnnotationRotateHandledAt, "2026-12-03T07:00:00Z"))
	var entries []bundleEntry
	g.Expect(json.Unmarshal([]byte(s.Annotations[AnnotationBundle]), &entries)).To(Succeed())
	g.Expect(entries).To(HaveLen(1))
	g.Expect(entries[0].Fingerprint).To(Equal(oldFP))
	g.Expect(entries[0].TrustedUntil).To(BeTemporally("~", rotatedAt.Add(overlap), time.Second))

	events := recorder.GetEvents()
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Type).To(Equal(corev1.EventTypeNormal))
	g.Expect(events[0].Reason).To(Equal(enrollmentv1.CARotatedReason))
	g.Expect(events[0].Message).To(ContainSubstring(newFP))
	g.Expect(events[0].Message).NotTo(ContainSubstring("PRIVATE"))
	g.Expect(env.Logs.String()).To(ContainSubstring("rotated the enrollment CA"), "the rotation is logged, so the suite's log scan sees it")

	// Handled once: reconciling again writes nothing and rotates nothing.
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(getSecret(t, ns).ResourceVersion).To(Equal(s.ResourceVersion))
	g.Expect(recorder.GetEvents()).To(BeEmpty())

	// The new CA signs; the bundle holds both; the server stays on the old one.
	issued, err := a.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(issued.Certificate, oldCA, newCA)).To(Equal(newFP))
	bundle, err := a.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fingerprints(bundleCerts(t, bundle))).To(Equal([]string{newFP, oldFP}))
	g.Expect(verifyAgainst(issued.Certificate, bundle, x509.ExtKeyUsageClientAuth)).To(Succeed())
	serving, err := a.ServingCertificate(ctx, hosts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(serving.Leaf, oldCA, newCA)).To(Equal(oldFP))
	g.Expect(serving.Leaf.NotAfter).To(BeTemporally("<=", entries[0].TrustedUntil))
	g.Expect(serving.Leaf.DNSNames).To(Equal([]string{"enroll.example.org"}))
	g.Expect(serving.Leaf.IPAddresses).To(HaveLen(1))
	oldRoots := x509.NewCertPool()
	oldRoots.AddCert(oldCA)
	_, err = serving.Leaf.Verify(x509.VerifyOptions{Roots: oldRoots, DNSName: "enroll.example.org"})
	g.Expect(err).NotTo(HaveOccurred(), "an agent with only the old bundle verifies the server")
	served, err = serve(&tls.ClientHelloInfo{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(served.Leaf, oldCA, newCA)).To(Equal(oldFP))

	// A second replica sees the rotation once its cache is stale.
	time.Sleep(300 * time.Millisecond)
	issued, err = b.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(issued.Certificate, oldCA, newCA)).To(Equal(newFP))
	bundle, err = b.Bundle(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fingerprints(bundleCerts(t, bundle))).To(Equal([]string{newFP, oldFP}))

	// After the overlap the old CA, and its key, are gone.
	time.Sleep(time.Until(rotatedAt.Add(overlap + 100*time.Millisecond)))
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s = getSecret(t, ns)
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(Equal([]string{newFP}))
	g.Expect(s.Data).NotTo(HaveKey(KeyPreviousKeys))
	g.Expect(s.Annotations).NotTo(HaveKey(AnnotationBundle))
	for _, in := range []*instance{a, b} {
		bundle, err = in.Bundle(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fingerprints(bundleCerts(t, bundle))).To(Equal([]string{newFP}))
		serving, err = in.ServingCertificate(ctx, hosts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(issuerOf(serving.Leaf, oldCA, newCA)).To(Equal(newFP))
	}
	served, err = serve(&tls.ClientHelloInfo{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(served.Leaf, oldCA, newCA)).To(Equal(newFP), "GetCertificate follows the end of the overlap")
	g.Expect(recorder.GetEvents()).To(BeEmpty(), "pruning is no rotation")
}

func TestARotationRequestSeenByTwoReplicasRotatesOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	recA, recB := fluxevents.NewFakeRecorder(10, false), fluxevents.NewFakeRecorder(10, false)
	a := newInstance(t, ns, recA, nil)
	b := newInstance(t, ns, recB, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())

	for i, value := range []string{"first", "second", "third"} {
		requestRotation(t, ns, value)
		var wg sync.WaitGroup
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); errA = a.Reconcile(ctx) }()
		go func() { defer wg.Done(); errB = b.Reconcile(ctx) }()
		wg.Wait()
		g.Expect(errA).NotTo(HaveOccurred())
		g.Expect(errB).NotTo(HaveOccurred())
		s := getSecret(t, ns)
		g.Expect(bundleCerts(t, s.Data["ca.crt"])).To(HaveLen(i+2), "request %q", value)
		g.Expect(s.Annotations).To(HaveKeyWithValue(AnnotationRotateHandledAt, value))
	}
	g.Expect(len(recA.GetEvents()) + len(recB.GetEvents())).To(Equal(3))
	s := getSecret(t, ns)
	keys, err := parsePrivateKeys(s.Data[KeyPreviousKeys])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(HaveLen(3), "every previous CA in the overlap keeps its key")
	st, err := parseSecret(s, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(servingAuthority(st, time.Now()).fingerprint).To(Equal(st.previous[2].fingerprint), "the oldest CA serves")
}

func TestRotateReplacesTheSignerAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	oldFP := fingerprint(bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0].Raw)

	g.Expect(a.Rotate(ctx)).To(Succeed())
	s := getSecret(t, ns)
	cas := bundleCerts(t, s.Data["ca.crt"])
	g.Expect(fingerprints(cas)[1:]).To(Equal([]string{oldFP}))
	issued, err := a.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(issued.Certificate, cas...)).To(Equal(fingerprints(cas)[0]))
}

func TestACAPastTwoThirdsOfItsLifetimeRotatesByItself(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	recorder := fluxevents.NewFakeRecorder(10, false)
	a := newInstance(t, ns, recorder, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(recorder.GetEvents()).To(BeEmpty())
	oldFP := fingerprint(bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0].Raw)

	a.clock.advance(DefaultLifetime * 2 / 3)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s := getSecret(t, ns)
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(HaveLen(2))
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))[1]).To(Equal(oldFP))
	events := recorder.GetEvents()
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Reason).To(Equal(enrollmentv1.CARotatedReason))
	g.Expect(events[0].Message).To(ContainSubstring(causeLifetime))
}

func TestRunDropsTheOldCAWhenTheOverlapEnds(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	const overlap = 2 * time.Second
	// r runs with a long interval: only the end of the overlap can wake it.
	r := newInstance(t, ns, nil, func(o *Options) {
		o.Overlap = overlap
		o.Interval = time.Hour
		o.RefreshAfter = 100 * time.Millisecond
	})
	other := newInstance(t, ns, nil, func(o *Options) { o.Overlap = overlap })
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	g.Eventually(func() int { return len(bundleCertsOrNil(ns)) }, 10*time.Second, 50*time.Millisecond).To(Equal(1))

	g.Expect(other.Rotate(ctx)).To(Succeed())
	rotatedAt := time.Now()
	// r learns of the rotation through its cache, as on the signing path.
	g.Eventually(func() int {
		bundle, err := r.Bundle(ctx)
		if err != nil {
			return 0
		}
		return len(bundleCerts(t, bundle))
	}, 5*time.Second, 50*time.Millisecond).To(Equal(2))
	g.Eventually(func() int { return len(bundleCertsOrNil(ns)) }, 10*time.Second, 50*time.Millisecond).To(Equal(1))
	g.Expect(time.Since(rotatedAt)).To(BeNumerically(">=", overlap))
	g.Expect(getSecret(t, ns).Data).NotTo(HaveKey(KeyPreviousKeys))
	cancel()
	<-done
}

// bundleCertsOrNil returns the certificates of the Secret's ca.crt, or nil.
func bundleCertsOrNil(ns string) []string {
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: DefaultSecretName}, &s); err != nil {
		return nil
	}
	as, err := parseCertificates(s.Data[KeyBundle])
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.fingerprint)
	}
	return out
}

func TestTheSecretHoldsNoKeyOutsideItsKeyEntries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(a.Rotate(ctx)).To(Succeed())
	s := getSecret(t, ns)
	for k, v := range s.Data {
		hasKey := strings.Contains(string(v), "PRIVATE KEY")
		g.Expect(hasKey).To(Equal(k == "tls.key" || k == KeyPreviousKeys), "key %s", k)
	}
	for k, v := range s.Annotations {
		g.Expect(v).NotTo(ContainSubstring("PRIVATE KEY"), "annotation %s", k)
	}
}

func TestConcurrentSignsOnAStaleCacheReadTheSecretOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	a := newInstance(t, ns, nil, nil)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	a.clock.advance(DefaultRefreshAfter + time.Second)
	before := a.reader.reads.Load()

	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = a.Sign(ctx, newRequest(t, time.Hour))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(a.reader.reads.Load()).To(Equal(before + 1))
}
