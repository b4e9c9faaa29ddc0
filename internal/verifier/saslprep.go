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
	"unicode/utf8"

	"github.com/xdg-go/stringprep"
	"golang.org/x/text/unicode/norm"
)

// pgSASLprep prepares a password for SCRAM the way PostgreSQL does
// (pg_saslprep in src/common/saslprep.c, used alike by the server when it
// hashes a plaintext password and by libpq when it logs in), so that a
// verifier made here matches the password a libpq client presents.
//
// PostgreSQL follows RFC 4013 with these differences, each of which decides
// the bytes that are hashed:
//   - a pure-ASCII password is used unchanged (control characters included);
//   - a password that is not valid UTF-8 is used as raw bytes;
//   - the non-ASCII spaces of RFC 3454 table C.1.2 are mapped to U+0020
//     before the "mapped to nothing" characters of table B.1 are dropped, so
//     U+200B, which is in both, becomes a space;
//   - the prohibited-output, unassigned (Unicode 3.2) and bidirectional checks
//     run on the mapped string before NFKC normalisation, not after;
//   - a password that maps to nothing, or that any check refuses, is used as
//     raw bytes instead of being rejected.
//
// The stringprep tables come from github.com/xdg-go/stringprep. Its table
// B.1 lacks U+1806 MONGOLIAN TODO SOFT HYPHEN, which RFC 3454 and PostgreSQL
// map to nothing; it is added here.
func pgSASLprep(password string) string {
	if isASCII(password) || !utf8.ValidString(password) {
		return password
	}
	mapped := make([]rune, 0, len(password))
	for _, r := range password {
		switch {
		case stringprep.TableC1_2.Contains(r):
			mapped = append(mapped, ' ')
		case mappedToNothing(r):
		default:
			mapped = append(mapped, r)
		}
	}
	if len(mapped) == 0 {
		return password
	}
	randAL := false
	for _, r := range mapped {
		if prohibitedOutput(r) || stringprep.TableA1.Contains(r) {
			return password
		}
		if stringprep.TableD1.Contains(r) {
			randAL = true
		}
	}
	if randAL {
		for _, r := range mapped {
			if stringprep.TableD2.Contains(r) {
				return password
			}
		}
		if !stringprep.TableD1.Contains(mapped[0]) || !stringprep.TableD1.Contains(mapped[len(mapped)-1]) {
			return password
		}
	}
	return norm.NFKC.String(string(mapped))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// mongolianTodoSoftHyphen is in RFC 3454 table B.1 but missing from
// stringprep.TableB1.
const mongolianTodoSoftHyphen = 0x1806

func mappedToNothing(r rune) bool {
	if r == mongolianTodoSoftHyphen {
		return true
	}
	_, ok := stringprep.TableB1[r]
	return ok
}

// prohibitedOutput reports whether r is in one of the tables RFC 4013 lists as
// prohibited output (C.1.2, C.2.1, C.2.2, C.3, C.4, C.5, C.6, C.7, C.8, C.9).
func prohibitedOutput(r rune) bool {
	for _, t := range prohibitedTables {
		if t.Contains(r) {
			return true
		}
	}
	return false
}

var prohibitedTables = []stringprep.Set{
	stringprep.TableC1_2,
	stringprep.TableC2_1,
	stringprep.TableC2_2,
	stringprep.TableC3,
	stringprep.TableC4,
	stringprep.TableC5,
	stringprep.TableC6,
	stringprep.TableC7,
	stringprep.TableC8,
	stringprep.TableC9,
}
