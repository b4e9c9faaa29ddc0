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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
)

// Keys of the CA Secret's data.
const (
	// KeyBundle is the trust bundle: every CA still trusted, current first.
	KeyBundle = "ca.crt"
	// KeyPreviousKeys holds the private keys of the previous CAs still in the bundle.
	KeyPreviousKeys = "previous.key"
)

// Annotations of the CA Secret.
const (
	// AnnotationBundle lists the previous CAs in the bundle and when each leaves it.
	AnnotationBundle = "enrollment.credo.dev/bundle"
	// AnnotationRotateRequestedAt requests a rotation when set to a new value.
	AnnotationRotateRequestedAt = "enrollment.credo.dev/rotate-requested-at"
	// AnnotationRotateHandledAt records the last rotation request handled.
	AnnotationRotateHandledAt = "enrollment.credo.dev/rotate-handled-at"
)

// bundleEntry is one previous CA in AnnotationBundle.
type bundleEntry struct {
	Fingerprint  string    `json:"fingerprint"`
	TrustedUntil time.Time `json:"trustedUntil"`
}

// state is the CA Secret, parsed: the current CA and the previous ones
// still trusted, newest first.
type state struct {
	current  *authority
	previous []*authority
}

// parseSecret reads the CAs out of s. The current CA's key is tls.key or,
// when s holds none and store is not nil, the key of store its
// certificate's Subject Key Identifier names. Its errors name keys, never
// their content.
func parseSecret(s *corev1.Secret, store KeyStore) (*state, error) {
	where := s.Namespace + "/" + s.Name
	certs, err := parseCertificates(s.Data[corev1.TLSCertKey])
	if err != nil || len(certs) != 1 {
		return nil, fmt.Errorf("secret %s: %s must hold exactly one PEM certificate", where, corev1.TLSCertKey)
	}
	cur := certs[0]
	if !cur.cert.IsCA || !cur.cert.BasicConstraintsValid {
		return nil, fmt.Errorf("secret %s: %s is not a CA certificate", where, corev1.TLSCertKey)
	}
	if len(s.Data[corev1.TLSPrivateKeyKey]) == 0 {
		if store == nil {
			return nil, fmt.Errorf("secret %s: %s is missing: the key of CA %s is kept in a key store (a PKCS#11 token) this controller was not given",
				where, corev1.TLSPrivateKeyKey, cur.fingerprint)
		}
		if err := cur.findKey(store); err != nil {
			return nil, fmt.Errorf("secret %s: %w", where, err)
		}
		if cur.key == nil {
			return nil, fmt.Errorf("secret %s: the key of CA %s (id %x) is not in the key store", where, cur.fingerprint, cur.cert.SubjectKeyId)
		}
	} else {
		keys, err := parsePrivateKeys(s.Data[corev1.TLSPrivateKeyKey])
		if err != nil || len(keys) != 1 {
			return nil, fmt.Errorf("secret %s: %s must hold exactly one PEM private key", where, corev1.TLSPrivateKeyKey)
		}
		if err := cur.setKey(keys[0].key, keys[0].pem); err != nil {
			return nil, fmt.Errorf("secret %s: %s does not belong to %s", where, corev1.TLSPrivateKeyKey, corev1.TLSCertKey)
		}
	}
	st := &state{current: cur}

	var entries []bundleEntry
	if v, ok := s.Annotations[AnnotationBundle]; ok && v != "" {
		if err := json.Unmarshal([]byte(v), &entries); err != nil {
			return nil, fmt.Errorf("secret %s: annotation %s is not a JSON list of {fingerprint, trustedUntil}", where, AnnotationBundle)
		}
	}
	until := make(map[string]time.Time, len(entries))
	for _, e := range entries {
		until[e.Fingerprint] = e.TrustedUntil
	}
	bundle, err := parseCertificates(s.Data[KeyBundle])
	if err != nil {
		return nil, fmt.Errorf("secret %s: %s: %w", where, KeyBundle, err)
	}
	for _, a := range bundle {
		t, listed := until[a.fingerprint]
		if !listed || a.fingerprint == cur.fingerprint || t.IsZero() {
			continue
		}
		if slices.ContainsFunc(st.previous, func(p *authority) bool { return p.fingerprint == a.fingerprint }) {
			continue
		}
		a.trustedUntil = t
		st.previous = append(st.previous, a)
	}
	prevKeys, err := parsePrivateKeys(s.Data[KeyPreviousKeys])
	if err != nil {
		return nil, fmt.Errorf("secret %s: %s: %w", where, KeyPreviousKeys, err)
	}
	for _, k := range prevKeys {
		for _, a := range st.previous {
			if a.key == nil && publicKeysEqual(a.cert.PublicKey, k.key.Public()) {
				a.key, a.keyPEM = k.key, k.pem
				break
			}
		}
	}
	if store != nil {
		for _, a := range st.previous {
			if a.key != nil {
				continue
			}
			if err := a.findKey(store); err != nil {
				return nil, fmt.Errorf("secret %s: %w", where, err)
			}
		}
	}
	st.sortPrevious()
	return st, nil
}

// findKey looks the key of a up in store by its certificate's Subject Key
// Identifier, and attaches it when it belongs to the certificate. A key
// not in the store leaves a without one.
func (a *authority) findKey(store KeyStore) error {
	id := a.cert.SubjectKeyId
	if len(id) == 0 {
		return nil
	}
	key, err := store.Find(id)
	if err != nil {
		return fmt.Errorf("%w: looking the key of CA %s up in the key store: %w", ca.ErrUnavailable, a.fingerprint, err)
	}
	if key == nil {
		return nil
	}
	if !publicKeysEqual(a.cert.PublicKey, key.Public()) {
		return fmt.Errorf("the key of id %x in the key store does not belong to CA %s", id, a.fingerprint)
	}
	a.key, a.keyID = key, slices.Clone(id)
	return nil
}

// sortPrevious orders the previous CAs newest first.
func (st *state) sortPrevious() {
	slices.SortStableFunc(st.previous, func(a, b *authority) int {
		return b.cert.NotBefore.Compare(a.cert.NotBefore)
	})
}

// prune drops the previous CAs whose overlap has ended and returns them.
func (st *state) prune(now time.Time) []*authority {
	var dropped []*authority
	st.previous = slices.DeleteFunc(st.previous, func(a *authority) bool {
		if a.trustedAt(now) {
			return false
		}
		dropped = append(dropped, a)
		return true
	})
	return dropped
}

// rotate makes next the current CA; the current one stays trusted for
// overlap (no longer than its own lifetime), with its key.
func (st *state) rotate(next *authority, now time.Time, overlap time.Duration) {
	old := st.current
	old.trustedUntil = now.Add(overlap)
	if old.trustedUntil.After(old.cert.NotAfter) {
		old.trustedUntil = old.cert.NotAfter
	}
	st.previous = append([]*authority{old}, st.previous...)
	st.current = next
	st.sortPrevious()
}

// trusted returns the CAs in the bundle at now: current first.
func (st *state) trusted(now time.Time) []*authority {
	out := []*authority{st.current}
	for _, a := range st.previous {
		if a.trustedAt(now) {
			out = append(out, a)
		}
	}
	return out
}

// bundlePEM is the PEM of the CAs trusted at now.
func (st *state) bundlePEM(now time.Time) []byte {
	var buf bytes.Buffer
	for _, a := range st.trusted(now) {
		buf.Write(a.certPEM)
	}
	return buf.Bytes()
}

// nextEvent is when the state next needs a write: a previous CA's overlap
// ends, or the current CA is due for rotation.
func (st *state) nextEvent() time.Time {
	next := rotationTime(st.current.cert)
	for _, a := range st.previous {
		end := a.trustedUntil
		if a.cert.NotAfter.Before(end) {
			end = a.cert.NotAfter
		}
		if end.Before(next) {
			next = end
		}
	}
	return next
}

// render writes st into s: the data keys and the bundle annotation. The
// labels and annotation of the trust-anchor contract that earlier versions
// put on the Secret are removed: the CA is published by the TrustAnchor
// Anchor declares, and the label leg would be a second claim. Other labels
// and annotations of s are kept.
func (st *state) render(s *corev1.Secret, o *Options, now time.Time) error {
	data := map[string][]byte{
		corev1.TLSCertKey: st.current.certPEM,
		KeyBundle:         st.bundlePEM(now),
	}
	if st.current.keyPEM != nil {
		data[corev1.TLSPrivateKeyKey] = st.current.keyPEM
	}
	var prevKeys bytes.Buffer
	entries := make([]bundleEntry, 0, len(st.previous))
	for _, a := range st.previous {
		if !a.trustedAt(now) {
			continue
		}
		entries = append(entries, bundleEntry{Fingerprint: a.fingerprint, TrustedUntil: a.trustedUntil.UTC()})
		if a.keyPEM != nil {
			prevKeys.Write(a.keyPEM)
		}
	}
	if prevKeys.Len() > 0 {
		data[KeyPreviousKeys] = prevKeys.Bytes()
	}
	s.Data = data
	s.StringData = nil
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}

	keys := trustv1.NewContractKeys(o.LabelDomain)
	labels := maps.Clone(s.Labels)
	delete(labels, keys.PublishCACert)
	delete(labels, keys.Release)
	if len(labels) == 0 {
		labels = nil
	}
	s.Labels = labels

	annotations := maps.Clone(s.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, keys.Key)
	if len(entries) == 0 {
		delete(annotations, AnnotationBundle)
	} else {
		v, err := json.Marshal(entries)
		if err != nil {
			return errors.New("encoding the bundle annotation")
		}
		annotations[AnnotationBundle] = string(v)
	}
	s.Annotations = annotations
	return nil
}

// secretEqual says whether a write of b over a would change nothing this package owns.
func secretEqual(a, b *corev1.Secret) bool {
	return a.Type == b.Type &&
		maps.Equal(a.Labels, b.Labels) &&
		maps.Equal(a.Annotations, b.Annotations) &&
		maps.EqualFunc(a.Data, b.Data, bytes.Equal)
}
