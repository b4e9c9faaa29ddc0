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

package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// AccountSecretName returns <release>.<dns(username)>.account, shortened with a
// hash of the username when it would exceed 253 characters.
func AccountSecretName(release, username string) string {
	name := release + "." + DNSName(username) + AccountSecretSuffix
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(username))
	keep := 253 - len(release) - len(AccountSecretSuffix) - 2 - 12
	return release + "." + strings.Trim(DNSName(username)[:keep], "-") + "-" + hex.EncodeToString(sum[:])[:12] + AccountSecretSuffix
}

// SecretName is the name of the account's Secret in its namespace:
// AccountSecretName(spec.release, spec.username).
func (in *CredentialAccount) SecretName() string {
	return AccountSecretName(in.Spec.Release, in.Spec.Username)
}

// DNSName maps a username to a DNS label: lower-cased, every character
// outside [a-z0-9-] replaced by '-', trimmed of leading and trailing '-'.
// Two usernames can map to one name ("App_User" and "app.user"): callers
// must treat that as a collision.
func DNSName(username string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(username) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "user"
	}
	return s
}
