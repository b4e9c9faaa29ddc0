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

package verifier

import (
	"crypto/subtle"
	"encoding/base64"
	"strconv"
	"strings"
)

// Matches reports whether stored is a value f computes for password: for
// SCRAM-SHA-256 with the salt stored holds, at the iteration count Verifier
// uses (any other count does not match, so that a value written by someone
// else never costs more than one verifier to check), for the other
// built-ins byte for byte. Comparisons take constant time; nothing is
// logged or returned of either value. A stored value f could not have
// produced (malformed, another format) does not match.
func Matches(f Format, username, password, stored string) bool {
	var want string
	if f.Name() == SCRAMSHA256 {
		salt, iterations, ok := scramParams(stored)
		if !ok {
			return false
		}
		s, err := scramSecret(password, salt, iterations)
		if err != nil {
			return false
		}
		want = s
	} else {
		s, err := f.Verifier(username, password)
		if err != nil {
			return false
		}
		want = s
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(stored)) == 1
}

// scramParams reads salt and iteration count from
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
func scramParams(stored string) ([]byte, int, bool) {
	rest, ok := strings.CutPrefix(stored, "SCRAM-SHA-256$")
	if !ok {
		return nil, 0, false
	}
	params, _, ok := strings.Cut(rest, "$")
	if !ok {
		return nil, 0, false
	}
	iter, b64, ok := strings.Cut(params, ":")
	if !ok {
		return nil, 0, false
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n != SCRAMIterations {
		return nil, 0, false
	}
	salt, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(salt) == 0 {
		return nil, 0, false
	}
	return salt, n, true
}
