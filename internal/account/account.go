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

// Package account holds credential accounts' Secrets: their names, the
// history annotation, password generation, the ownership guard, and the one
// Writer of account Secrets and kept platform passwords.
package account

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
)

// PasswordLength is the length of every generated password.
const PasswordLength = 40

// alphabet has no characters that need quoting in a shell, a URL or SQL.
const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_"

// maxHistory is how many operations the history annotation keeps.
const maxHistory = 10

// GeneratePassword returns PasswordLength characters from crypto/rand.
func GeneratePassword() (string, error) {
	var b strings.Builder
	max := big.NewInt(int64(len(alphabet)))
	for i := 0; i < PasswordLength; i++ {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}

// LabelValue fits a name into a label value (63 characters), replacing the
// tail of a longer one by a hash.
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:50], "-_.") + "-" + hex.EncodeToString(sum[:])[:12]
}

// KeptSecretName is where a platform account's plaintext is kept, in the
// platform namespace: <namespace>.<account secret name>, shortened with a
// hash when it would exceed 253 characters.
func KeptSecretName(acct *credv1.CredentialAccount) string {
	name := acct.Namespace + "." + acct.SecretName()
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:230], "-.") + "-" + hex.EncodeToString(sum[:])[:12] + credv1.AccountSecretSuffix
}

// KeptLabel is the account label value of a kept password: it names the
// account's namespace and name.
func KeptLabel(acct *credv1.CredentialAccount) string {
	return LabelValue(acct.Namespace + "." + acct.Name)
}

// History is the JSON value of the history annotation.
type History []credv1.Operation

// ParseHistory reads the annotation; an unreadable value starts afresh.
func ParseHistory(v string) History {
	var h History
	if v == "" || json.Unmarshal([]byte(v), &h) != nil {
		return nil
	}
	return h
}

// Append records an operation, keeping the last ten.
func (h History) Append(op credv1.Origin, by string, at time.Time) History {
	h = append(h, credv1.Operation{Operation: op, By: by})
	h[len(h)-1].At.Time = at.UTC().Truncate(time.Second)
	if len(h) > maxHistory {
		h = h[len(h)-maxHistory:]
	}
	return h
}

// String renders the annotation value.
func (h History) String() string {
	b, err := json.Marshal(h)
	if err != nil {
		return "[]"
	}
	return string(b)
}

// FieldOwner is the field manager of every write to an account Secret, by
// the credential-controller or the access API. A Secret without an entry of
// it is foreign.
const FieldOwner = fieldowner.CredentialController

// Keys are the annotation and label keys of account Secrets under one
// domain (credentials.cozystack.io by default).
type Keys struct {
	// Origin annotation: NotIssued, Migrated, Minted, Revoked, Generated.
	Origin string
	// History annotation: JSON, the last ten operations.
	History string
	// Account label names the CredentialAccount a Secret belongs to, for
	// selection; it proves nothing (see AccountUID).
	Account string
	// AccountUID annotation holds the UID of the CredentialAccount an
	// account Secret or a kept platform password belongs to. It is the
	// proof of ownership every write and delete checks: names are derived
	// from release and username, and two accounts can map to one name.
	AccountUID string
	// Rotate annotation records the spec.rotate value a platform password
	// was last rotated for, on the Secret itself, so a stale cache can never
	// rotate twice for one request.
	Rotate string
	// NamespaceUID label binds a kept platform password to the UID of the
	// tenant namespace of its account (binding.go).
	NamespaceUID string
	// ReleaseUID label binds an account Secret and a kept platform password
	// to the UID of the HelmRelease they were made for (binding.go).
	ReleaseUID string
	// Release annotation names, as <namespace>/<name>, the HelmRelease a
	// kept platform password is bound to.
	Release string
}

// NewKeys returns the keys under domain.
func NewKeys(domain string) Keys {
	return Keys{Origin: domain + "/origin", History: domain + "/history", Account: domain + "/account",
		AccountUID: domain + "/account-uid", Rotate: domain + "/rotate",
		NamespaceUID: domain + "/namespace-uid", ReleaseUID: domain + "/release-uid", Release: domain + "/release"}
}
