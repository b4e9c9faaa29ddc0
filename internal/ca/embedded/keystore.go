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
	"encoding/hex"

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

// keyPlace says, for logs, where the key of a is kept: "secret", or
// "key store id <hex>". Never the key.
func (a *authority) keyPlace() string {
	if a.keyID != nil {
		return "key store id " + hex.EncodeToString(a.keyID)
	}
	return "secret"
}
