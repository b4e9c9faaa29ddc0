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
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ThalesGroup/crypto11"
)

// Built says whether this binary can open a PKCS#11 token: it can.
const Built = true

const (
	// idLength is the length of a generated key's CKA_ID, that of a SHA-1
	// Subject Key Identifier: the CA certificate carries it as its SKI.
	idLength = 20
	// labelTime is the time format in a generated key's label.
	labelTime = "20060102T150405Z"
)

// Token is an open PKCS#11 token, logged in with the user PIN. It is safe
// for concurrent use.
type Token struct {
	ctx      *crypto11.Context
	keyLabel string

	mu sync.Mutex
	// found caches the key pairs looked up or generated, by hex id.
	found map[string]crypto11.Signer
}

// Open opens and logs into the token o names. Its errors name the module,
// the token and the PIN file, never the PIN.
func Open(o Options) (*Token, error) {
	if !o.Enabled() {
		return nil, errors.New("no PKCS#11 token is named")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	pin, err := readPIN(o.PINFile)
	if err != nil {
		return nil, err
	}
	ctx, err := crypto11.Configure(&crypto11.Config{Path: o.Module, TokenLabel: o.TokenLabel, Pin: pin})
	if err != nil {
		return nil, fmt.Errorf("opening the PKCS#11 token %q of module %s: %w", o.TokenLabel, o.Module, scrub(err, pin))
	}
	return &Token{ctx: ctx, keyLabel: o.KeyLabel, found: map[string]crypto11.Signer{}}, nil
}

// Generate makes a new ECDSA P-256 key pair in the token: a token object,
// private, sensitive and never extractable, for signing only, labelled
// <key label>-<UTC time>, with a random 20-byte id.
func (t *Token) Generate() (crypto.Signer, []byte, error) {
	id := make([]byte, idLength)
	if _, err := rand.Read(id); err != nil {
		return nil, nil, fmt.Errorf("generating a key id: %w", err)
	}
	label := t.keyLabel + "-" + time.Now().UTC().Format(labelTime)
	public, err := crypto11.NewAttributeSetWithIDAndLabel(id, []byte(label))
	if err != nil {
		return nil, nil, err
	}
	private := public.Copy()
	for attr, v := range map[crypto11.AttributeType]bool{
		crypto11.CkaToken: true, crypto11.CkaPrivate: true, crypto11.CkaSensitive: true,
		crypto11.CkaExtractable: false, crypto11.CkaSign: true,
	} {
		if err := private.Set(attr, v); err != nil {
			return nil, nil, err
		}
	}
	key, err := t.ctx.GenerateECDSAKeyPairWithAttributes(public, private, elliptic.P256())
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key pair in the PKCS#11 token: %w", err)
	}
	t.mu.Lock()
	t.found[hex.EncodeToString(id)] = key
	t.mu.Unlock()
	return key, id, nil
}

// Find returns the key pair of id, or nil when the token holds none.
func (t *Token) Find(id []byte) (crypto.Signer, error) {
	key, err := t.find(id)
	if key == nil || err != nil {
		return nil, err
	}
	return key, nil
}

func (t *Token) find(id []byte) (crypto11.Signer, error) {
	h := hex.EncodeToString(id)
	t.mu.Lock()
	key, ok := t.found[h]
	t.mu.Unlock()
	if ok {
		return key, nil
	}
	keys, err := t.ctx.FindKeyPairs(id, nil)
	if err != nil {
		return nil, fmt.Errorf("finding the key pair %s in the PKCS#11 token: %w", h, err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if len(keys) > 1 {
		return nil, fmt.Errorf("the PKCS#11 token holds %d key pairs of id %s", len(keys), h)
	}
	t.mu.Lock()
	t.found[h] = keys[0]
	t.mu.Unlock()
	return keys[0], nil
}

// Destroy destroys the key pair of id in the token, both halves; one the
// token does not hold is no error.
func (t *Token) Destroy(id []byte) error {
	key, err := t.find(id)
	if key == nil || err != nil {
		return err
	}
	if err := key.Delete(); err != nil {
		return fmt.Errorf("destroying the key pair %x in the PKCS#11 token: %w", id, err)
	}
	t.mu.Lock()
	delete(t.found, hex.EncodeToString(id))
	t.mu.Unlock()
	return nil
}

// KeyInfo is what the token says of one of its key pairs: never the key.
type KeyInfo struct {
	ID    []byte
	Label string
	// Private, Sensitive, AlwaysSensitive, Extractable and
	// NeverExtractable are the private key's attributes.
	Private, Sensitive, AlwaysSensitive, Extractable, NeverExtractable bool
}

// Keys lists the key pairs of the token whose label starts with the key
// label prefix: what `pkcs11-tool --list-objects` shows of them.
func (t *Token) Keys() ([]KeyInfo, error) {
	all, err := t.ctx.FindAllKeyPairs()
	if err != nil {
		return nil, fmt.Errorf("listing the key pairs of the PKCS#11 token: %w", err)
	}
	var out []KeyInfo
	for _, key := range all {
		set, err := t.ctx.GetAttributes(key, []crypto11.AttributeType{crypto11.CkaId, crypto11.CkaLabel,
			crypto11.CkaPrivate, crypto11.CkaSensitive, crypto11.CkaAlwaysSensitive, crypto11.CkaExtractable, crypto11.CkaNeverExtractable})
		if err != nil {
			return nil, fmt.Errorf("reading the attributes of a key pair of the PKCS#11 token: %w", err)
		}
		label := string(value(set, crypto11.CkaLabel))
		if !strings.HasPrefix(label, t.keyLabel+"-") {
			continue
		}
		out = append(out, KeyInfo{
			ID: value(set, crypto11.CkaId), Label: label,
			Private: isTrue(set, crypto11.CkaPrivate), Sensitive: isTrue(set, crypto11.CkaSensitive),
			AlwaysSensitive: isTrue(set, crypto11.CkaAlwaysSensitive), Extractable: isTrue(set, crypto11.CkaExtractable),
			NeverExtractable: isTrue(set, crypto11.CkaNeverExtractable),
		})
	}
	return out, nil
}

// KeyIDs lists the ids of the key pairs Keys lists: what the embedded CA
// compares with the CAs its Secret names (embedded.KeyLister).
func (t *Token) KeyIDs() ([][]byte, error) {
	keys, err := t.Keys()
	if err != nil {
		return nil, err
	}
	ids := make([][]byte, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids, nil
}

func value(set crypto11.AttributeSet, attr crypto11.AttributeType) []byte {
	if a, ok := set[attr]; ok && a != nil {
		return a.Value
	}
	return nil
}

// isTrue reads a CK_BBOOL attribute.
func isTrue(set crypto11.AttributeSet, attr crypto11.AttributeType) bool {
	v := value(set, attr)
	return len(v) == 1 && v[0] != 0
}

// Close logs out of the token and releases the module.
func (t *Token) Close() error { return t.ctx.Close() }

// readPIN reads the PIN from file: one trailing newline (LF or CRLF) is
// not part of it. Its errors never hold the PIN.
func readPIN(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the PKCS#11 PIN file (--%s): %w", FlagPINFile, err)
	}
	pin := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pin == "" {
		return "", fmt.Errorf("the PKCS#11 PIN file %s (--%s) is empty", file, FlagPINFile)
	}
	return pin, nil
}

// scrub replaces the PIN in err's message, should a module ever put it
// there: the error is logged.
func scrub(err error, pin string) error {
	if err == nil || !strings.Contains(err.Error(), pin) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pin, "<pin>"))
}
