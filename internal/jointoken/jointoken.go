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

// Package jointoken is the one home of join tokens: minting one, the hash a
// JoinToken record stores of its secret, parsing what an agent presents,
// and comparing it with the record. The access API mints through it, the
// enrollment server checks through it; what a token is allowed to do (its
// record, its policy) is theirs.
package jointoken

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/credo-dev/credo/pkg/enrollapi"
)

const (
	// tokenIDBytes and tokenSecretBytes size a join token: a 16-character id
	// (the JoinToken's name) and a 256-bit secret.
	tokenIDBytes     = 10
	tokenSecretBytes = 32
	hashPrefix       = "sha256:"
)

// lowerBase32 encodes without padding in lower case, so an id is a valid
// Kubernetes name and a token has no character a shell quotes.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Token is a join token: ID names its JoinToken record, Secret is known only
// to its holder. String() is what the holder is given, once.
type Token struct {
	ID     string
	Secret string
}

// String returns "<id>.<secret>".
func (t Token) String() string { return t.ID + enrollapi.TokenSeparator + t.Secret }

// Hash returns the value stored in the JoinToken: "sha256:<hex>" of the secret.
func (t Token) Hash() string { return HashSecret(t.Secret) }

// New returns a random token from the system CSPRNG.
func New() (Token, error) {
	id := make([]byte, tokenIDBytes)
	secret := make([]byte, tokenSecretBytes)
	if _, err := rand.Read(id); err != nil {
		return Token{}, err
	}
	if _, err := rand.Read(secret); err != nil {
		return Token{}, err
	}
	return Token{ID: lowerBase32.EncodeToString(id), Secret: lowerBase32.EncodeToString(secret)}, nil
}

// errMalformedToken never includes the token: it may be a mistyped real one.
var errMalformedToken = errors.New("the join token is malformed: want <id>.<secret>")

// Parse splits "<id>.<secret>" and checks both parts' shape.
func Parse(s string) (Token, error) {
	id, secret, ok := strings.Cut(strings.TrimSpace(s), enrollapi.TokenSeparator)
	if !ok || len(id) != lowerBase32.EncodedLen(tokenIDBytes) || len(secret) != lowerBase32.EncodedLen(tokenSecretBytes) {
		return Token{}, errMalformedToken
	}
	if _, err := lowerBase32.DecodeString(id); err != nil {
		return Token{}, errMalformedToken
	}
	if _, err := lowerBase32.DecodeString(secret); err != nil {
		return Token{}, errMalformedToken
	}
	return Token{ID: id, Secret: secret}, nil
}

// HashSecret returns "sha256:<hex>" of secret. A 256-bit random secret needs
// no salt or stretching: the hash cannot be inverted or guessed.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// SecretMatches compares the secret's hash with the stored one in constant time.
func SecretMatches(storedHash, secret string) bool {
	return subtle.ConstantTimeCompare([]byte(storedHash), []byte(HashSecret(secret))) == 1
}
