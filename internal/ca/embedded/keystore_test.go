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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/credo-dev/credo/internal/ca"
)

// memKeys is a KeyStore in memory, shared by the replicas of a test as a
// token is: what a PKCS#11 token does, without one (tests/pkcs11 runs
// SoftHSM2).
type memKeys struct {
	mu        sync.Mutex
	keys      map[string]*ecdsa.PrivateKey
	destroyed []string
	failFind  bool
}

func newMemKeys() *memKeys { return &memKeys{keys: map[string]*ecdsa.PrivateKey{}} }

func (m *memKeys) Generate() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	id := make([]byte, 20)
	if _, err := rand.Read(id); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[hex.EncodeToString(id)] = key
	return key, id, nil
}

func (m *memKeys) Find(id []byte) (crypto.Signer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failFind {
		return nil, errors.New("the token is unreachable (test)")
	}
	if k, ok := m.keys[hex.EncodeToString(id)]; ok {
		return k, nil
	}
	return nil, nil
}

func (m *memKeys) Destroy(id []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := hex.EncodeToString(id)
	delete(m.keys, h)
	m.destroyed = append(m.destroyed, h)
	return nil
}

func (m *memKeys) KeyIDs() ([][]byte, error) {
	var ids [][]byte
	for _, h := range m.ids() {
		id, err := hex.DecodeString(h)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// ids are the ids of the keys the store holds, sorted.
func (m *memKeys) ids() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.keys))
}

// expectNoPrivateKey fails when any value of s is, or holds, a private key.
func expectNoPrivateKey(g Gomega, s *corev1.Secret) {
	g.Expect(s.Data).NotTo(HaveKey(corev1.TLSPrivateKeyKey))
	g.Expect(s.Data).NotTo(HaveKey(KeyPreviousKeys))
	for k, v := range s.Data {
		g.Expect(string(v)).NotTo(ContainSubstring("PRIVATE KEY"), "data %s", k)
		for rest := v; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			g.Expect(b.Type).To(Equal("CERTIFICATE"), "data %s", k)
		}
	}
}

// With a key store the Secret holds certificates only; the CA's Subject
// Key Identifier is the id of its key in the store; signing, rotation and
// the overlap work as with the key in the Secret, and the key of a CA
// whose overlap ended is destroyed in the store.
func TestWithAKeyStoreTheSecretHoldsNoKey(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	keys := newMemKeys()
	const overlap = time.Hour
	a := newInstance(t, ns, nil, func(o *Options) { o.Keys = keys; o.Overlap = overlap })
	b := newInstance(t, ns, nil, func(o *Options) { o.Keys = keys; o.Overlap = overlap })
	g.Expect(a.Reconcile(ctx)).To(Succeed())

	s := getSecret(t, ns)
	expectNoPrivateKey(g, s)
	g.Expect(slices.Sorted(maps.Keys(s.Data))).To(Equal([]string{"ca.crt", "tls.crt"}))
	oldCA := bundleCerts(t, s.Data["tls.crt"])[0]
	g.Expect(keys.ids()).To(Equal([]string{hex.EncodeToString(oldCA.SubjectKeyId)}))

	// Another replica finds the key in the store by the certificate.
	issued, err := b.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(verifyAgainst(issued.Certificate, s.Data["ca.crt"], x509.ExtKeyUsageClientAuth)).To(Succeed())
	g.Expect(issued.Certificate.AuthorityKeyId).To(Equal(oldCA.SubjectKeyId))

	g.Expect(a.Rotate(ctx)).To(Succeed())
	s = getSecret(t, ns)
	expectNoPrivateKey(g, s)
	newCA := bundleCerts(t, s.Data["tls.crt"])[0]
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(Equal([]string{fingerprint(newCA.Raw), fingerprint(oldCA.Raw)}))
	g.Expect(keys.ids()).To(ConsistOf(hex.EncodeToString(oldCA.SubjectKeyId), hex.EncodeToString(newCA.SubjectKeyId)))

	b.clock.advance(DefaultRefreshAfter + time.Second)
	issued, err = b.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(issued.Certificate, oldCA, newCA)).To(Equal(fingerprint(newCA.Raw)), "the new CA signs at once")
	// The serving certificate stays on the old CA, whose key the store keeps, for the overlap.
	served, err := b.GetCertificate([]string{"127.0.0.1"})(&tls.ClientHelloInfo{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(served.Leaf, oldCA, newCA)).To(Equal(fingerprint(oldCA.Raw)))

	// The overlap ends: the old CA leaves the bundle and its key the store.
	a.clock.advance(overlap + time.Second)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s = getSecret(t, ns)
	expectNoPrivateKey(g, s)
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(Equal([]string{fingerprint(newCA.Raw)}))
	g.Expect(keys.ids()).To(Equal([]string{hex.EncodeToString(newCA.SubjectKeyId)}))
	g.Expect(keys.destroyed).To(Equal([]string{hex.EncodeToString(oldCA.SubjectKeyId)}))
}

// Replicas starting at once each generate a key; the keys of those that
// lost the race for the Secret are destroyed: the store keeps one.
func TestReplicasStartingAtOnceLeaveOneKeyInTheStore(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	keys := newMemKeys()
	const replicas = 4
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	start := make(chan struct{})
	for i := range replicas {
		in := newInstance(t, ns, nil, func(o *Options) { o.Keys = keys })
		wg.Go(func() { <-start; errs[i] = in.Reconcile(ctx) })
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	cur := bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0]
	g.Expect(keys.ids()).To(Equal([]string{hex.EncodeToString(cur.SubjectKeyId)}))
}

// An install whose key is in the Secret moves it into the store: a
// rotation to a CA whose key is generated in the store. The old key,
// already in the Secret, stays there (previous.key) for the overlap, so
// that agents holding the old bundle still verify the server, and leaves
// with its CA; from then on the Secret holds no key.
func TestAKeyInTheSecretMovesIntoTheStoreByARotation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const overlap = time.Hour
	before := newInstance(t, ns, nil, func(o *Options) { o.Overlap = overlap })
	g.Expect(before.Reconcile(ctx)).To(Succeed())
	oldCA := bundleCerts(t, getSecret(t, ns).Data["tls.crt"])[0]

	keys := newMemKeys()
	a := newInstance(t, ns, nil, func(o *Options) { o.Keys = keys; o.Overlap = overlap })
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s := getSecret(t, ns)
	g.Expect(s.Data).NotTo(HaveKey(corev1.TLSPrivateKeyKey), "the new CA's key is in the store")
	g.Expect(s.Data).To(HaveKey(KeyPreviousKeys), "the old key stays for the overlap")
	newCA := bundleCerts(t, s.Data["tls.crt"])[0]
	g.Expect(keys.ids()).To(Equal([]string{hex.EncodeToString(newCA.SubjectKeyId)}))
	g.Expect(fingerprints(bundleCerts(t, s.Data["ca.crt"]))).To(Equal([]string{fingerprint(newCA.Raw), fingerprint(oldCA.Raw)}))
	served, err := a.GetCertificate([]string{"127.0.0.1"})(&tls.ClientHelloInfo{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issuerOf(served.Leaf, oldCA, newCA)).To(Equal(fingerprint(oldCA.Raw)))

	g.Expect(a.Reconcile(ctx)).To(Succeed())
	g.Expect(getSecret(t, ns).ResourceVersion).To(Equal(s.ResourceVersion), "one rotation, not one per reconcile")

	a.clock.advance(overlap + time.Second)
	g.Expect(a.Reconcile(ctx)).To(Succeed())
	s = getSecret(t, ns)
	expectNoPrivateKey(g, s)
	g.Expect(keys.destroyed).To(BeEmpty(), "the old key was never in the store")
}

// A controller given no key store refuses a Secret whose key is in one,
// and says why; one whose store cannot be reached signs nothing
// (ErrUnavailable: agents retry).
func TestAKeyInTheStoreIsNeverReplacedByOneInTheSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	keys := newMemKeys()
	g.Expect(newInstance(t, ns, nil, func(o *Options) { o.Keys = keys }).Reconcile(ctx)).To(Succeed())
	s := getSecret(t, ns)

	without := newInstance(t, ns, nil, nil)
	err := without.Reconcile(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("tls.key is missing: the key of CA sha256:")))
	g.Expect(err).To(MatchError(ContainSubstring("a key store (a PKCS#11 token) this controller was not given")))
	_, err = without.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
	g.Expect(getSecret(t, ns).ResourceVersion).To(Equal(s.ResourceVersion), "nothing written")

	other := newInstance(t, ns, nil, func(o *Options) { o.Keys = newMemKeys() })
	g.Expect(other.Reconcile(ctx)).To(MatchError(ContainSubstring("is not in the key store")))

	keys.failFind = true
	unreachable := newInstance(t, ns, nil, func(o *Options) { o.Keys = keys })
	_, err = unreachable.Sign(ctx, newRequest(t, time.Hour))
	g.Expect(err).To(MatchError(ca.ErrUnavailable))
	g.Expect(getSecret(t, ns).ResourceVersion).To(Equal(s.ResourceVersion), "nothing written")
}
