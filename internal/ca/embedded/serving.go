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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"sync"
	"time"
)

// servingLifetime is the longest lifetime of a serving certificate.
const servingLifetime = 30 * 24 * time.Hour

// servingAuthority is the oldest CA trusted at now whose key is available:
// during an overlap, agents that hold only the previous bundle still verify
// the server.
func servingAuthority(st *state, now time.Time) *authority {
	trusted := st.trusted(now)
	for i := len(trusted) - 1; i >= 0; i-- {
		if trusted[i].key != nil {
			return trusted[i]
		}
	}
	return st.current
}

// ServingCertificate issues a TLS serving certificate for the enrollment
// server: DNS and IP SANs from hosts, server authentication, at most 30
// days, no longer than its CA stays trusted. Its key is generated in memory
// and never stored. It is signed by the oldest CA still in the bundle that
// has a key, so it stays on the previous CA during a rotation's overlap.
func (c *CA) ServingCertificate(ctx context.Context, hosts []string) (*tls.Certificate, error) {
	s, err := c.fresh(ctx)
	if err != nil {
		return nil, err
	}
	return issueServing(servingAuthority(s.state, c.now()), hosts, c.now())
}

func issueServing(a *authority, hosts []string, now time.Time) (*tls.Certificate, error) {
	notAfter := now.Add(servingLifetime)
	if a.cert.NotAfter.Before(notAfter) {
		notAfter = a.cert.NotAfter
	}
	if !a.trustedUntil.IsZero() && a.trustedUntil.Before(notAfter) {
		notAfter = a.trustedUntil
	}
	tmpl, err := servingTemplate(hosts, now.Add(-clockSkew), notAfter)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the serving key: %w", err)
	}
	leaf, der, err := a.issue(tmpl, key.Public())
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// GetCertificate returns a function for tls.Config.GetCertificate that
// serves a certificate for hosts from ServingCertificate, issued again when
// the CA that should sign it changes (a rotation's overlap ends) or when it
// has passed two thirds of its lifetime. When issuing fails, the previous
// certificate is served while it is valid.
func (c *CA) GetCertificate(hosts []string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	var (
		mu      sync.Mutex
		cached  *tls.Certificate
		signer  string
		renewAt time.Time
	)
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		ctx := context.Background()
		if hello != nil && hello.Context() != nil {
			ctx = hello.Context()
		}
		mu.Lock()
		defer mu.Unlock()
		now := c.now()
		s, err := c.fresh(ctx)
		if err != nil {
			if cached != nil && now.Before(cached.Leaf.NotAfter) {
				return cached, nil
			}
			return nil, err
		}
		a := servingAuthority(s.state, now)
		if cached != nil && signer == a.fingerprint && now.Before(renewAt) {
			return cached, nil
		}
		cert, err := issueServing(a, hosts, now)
		if err != nil {
			if cached != nil && now.Before(cached.Leaf.NotAfter) {
				return cached, nil
			}
			return nil, err
		}
		cached, signer = cert, a.fingerprint
		renewAt = rotationTime(cert.Leaf)
		if renewAt.Before(now.Add(time.Second)) {
			// Too short to renew early (its CA leaves the bundle soon):
			// keep it until it ends, when the signer changes anyway.
			renewAt = cert.Leaf.NotAfter
		}
		return cached, nil
	}
}
