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

package testpki

import (
	"crypto/ecdsa"
	"testing"
	"time"
)

// CA returns a self-signed CA certificate valid for a year and its private
// key, PEM encoded.
func CA(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	return CAUntil(t, cn, time.Now().Add(365*24*time.Hour))
}

// CAUntil is CA with a chosen expiry.
func CAUntil(t testing.TB, cn string, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	ca := Authority(t, cn, NotAfter(notAfter))
	return ca.CertPEM(), KeyPEM(t, ca)
}

// Authority is NewCA, failing t on error.
func Authority(t testing.TB, cn string, opts ...Option) *Cert {
	t.Helper()
	ca, err := NewCA(cn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Leaf is ca.NewLeaf, failing t on error.
func Leaf(t testing.TB, ca *Cert, opts ...Option) *Cert {
	t.Helper()
	c, err := ca.NewLeaf(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// SelfSigned is NewSelfSigned, failing t on error.
func SelfSigned(t testing.TB, opts ...Option) *Cert {
	t.Helper()
	c, err := NewSelfSigned(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// KeyPEM is c.KeyPEM, failing t on error.
func KeyPEM(t testing.TB, c *Cert) []byte {
	t.Helper()
	b, err := c.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Key is NewKey, failing t on error.
func Key(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
