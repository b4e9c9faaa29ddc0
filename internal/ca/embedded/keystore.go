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
	"context"
	"crypto"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// KeyStore keeps the CAs' private keys out of the Secret: in a PKCS#11
// token (package internal/ca/pkcs11), where they are generated and never
// leave. With a KeyStore (Options.Keys) the Secret holds certificates only;
// a CA's key is found in the store by the id it was generated with, which
// is its certificate's Subject Key Identifier.
type KeyStore interface {
	// Generate makes a new ECDSA P-256 key pair in the store and returns
	// its signer and its id.
	Generate() (crypto.Signer, []byte, error)
	// Find returns the key pair of id, or nil and no error when the store
	// holds none.
	Find(id []byte) (crypto.Signer, error)
	// Destroy destroys the key pair of id; one already gone is no error.
	Destroy(id []byte) error
}

// Causes of a rotation that only a KeyStore brings.
const (
	causeIntoStore = "its key is in the Secret and the CA keys are to be kept in the key store"
)

// keysInSecret says whether the current CA's key is kept in the Secret.
func (st *state) keysInSecret() bool { return st.current.keyPEM != nil }

// destroyKeys destroys, in the store, the keys of the CAs given; a failure
// is logged (the key is unused from then on) and the others are still
// destroyed. Only ids are logged.
func (c *CA) destroyKeys(ctx context.Context, why string, as ...*authority) {
	if c.opts.Keys == nil {
		return
	}
	for _, a := range as {
		if a == nil || a.keyID == nil {
			continue
		}
		id := hex.EncodeToString(a.keyID)
		if err := c.opts.Keys.Destroy(a.keyID); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "destroying a CA key in the key store", "keyID", id, "reason", why)
			continue
		}
		ctrl.LoggerFrom(ctx).Info("destroyed a CA key in the key store", "keyID", id, "reason", why)
	}
}

// settleKey settles the key of a, a CA generated in the store for a write
// of the Secret that failed with err, and reports whether the Secret
// records a all the same (the write was stored). base is the
// resourceVersion the write was conditional on; "" for a create.
//
// A refused write (writeRefused) stored nothing: the key, which no Secret
// will ever name, is destroyed. After any other error (a timeout, a 5xx, a
// cancelled context) the API server may have stored the Secret, or may
// yet: the Secret is read again, uncached. When it names a (tls.crt, or
// ca.crt once another replica rotated past it), the write was stored and
// the key stays. When it has moved past base to another CA, or an updated
// Secret is gone, the write can no longer land: the key is destroyed.
// Otherwise the key is kept, and that logged at error level with its id:
// a key left in the token is unused and can be removed by hand, while a
// destroyed key the Secret names stops every replica until the Secret, and
// with it the CA every agent trusts, is replaced.
func (c *CA) settleKey(ctx context.Context, err error, base string, a *authority) (recorded bool) {
	if c.opts.Keys == nil || a == nil || a.keyID == nil {
		return false
	}
	if writeRefused(err) {
		c.destroyKeys(ctx, "the CA Secret was not written", a)
		return false
	}
	log := ctrl.LoggerFrom(ctx).WithValues("secret", c.secretKey().String(), "keyID", hex.EncodeToString(a.keyID))
	var s corev1.Secret
	rerr := c.reader.Get(ctx, c.secretKey(), &s)
	switch {
	case rerr == nil && namesKey(&s, a.keyID):
		log.Info("the CA Secret was written despite an error", "error", err.Error())
		return true
	case rerr == nil && s.ResourceVersion != base, apierrors.IsNotFound(rerr) && base != "":
		c.destroyKeys(ctx, "the CA Secret was not written and can no longer be", a)
	case rerr != nil && !apierrors.IsNotFound(rerr):
		log.Error(rerr, "keeping a CA key in the key store: the CA Secret, whose write failed, could not be read back and may name it")
	default:
		log.Error(err, "keeping a CA key in the key store: the write of the CA Secret naming it failed and may still be stored")
	}
	return false
}

// writeRefused says whether err, from a write of the Secret, is a refusal:
// the API server stored nothing.
func writeRefused(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) ||
		apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsNotFound(err)
}

// namesKey says whether a CA certificate of s, current or in the bundle,
// has the Subject Key Identifier id: the id of its key in the store.
func namesKey(s *corev1.Secret, id []byte) bool {
	for _, k := range []string{corev1.TLSCertKey, KeyBundle} {
		certs, err := parseCertificates(s.Data[k])
		if err != nil {
			continue
		}
		for _, a := range certs {
			if bytes.Equal(a.cert.SubjectKeyId, id) {
				return true
			}
		}
	}
	return false
}

// keyPlace says, for logs, where the key of a is kept: "secret", or
// "key store id <hex>". Never the key.
func (a *authority) keyPlace() string {
	if a.keyID != nil {
		return "key store id " + hex.EncodeToString(a.keyID)
	}
	return "secret"
}
