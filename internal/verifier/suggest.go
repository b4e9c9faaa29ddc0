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
	"fmt"
	"strings"
)

// UnknownFormatError is Lookup's error for a name no format has. It wraps
// ErrUnknownFormat. Its message names the format asked for, the nearest
// built-in name when there is one, and the built-in formats once.
type UnknownFormatError struct {
	// Name is the name asked for.
	Name string
	// Suggestion is the nearest built-in format's name, or empty.
	Suggestion string
}

// Error implements the error interface.
func (e *UnknownFormatError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", ErrUnknownFormat, e.Name)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", e.Suggestion)
	}
	fmt.Fprintf(&b, "; the built-in formats are %s", strings.Join(Names(), ", "))
	return b.String()
}

// Unwrap returns ErrUnknownFormat.
func (e *UnknownFormatError) Unwrap() error { return ErrUnknownFormat }

// aliases are the engines' own names of the built-in formats, normalized
// (see normalize): the names their documentation and configuration use.
var aliases = map[string]string{
	"mysqlnativepassword": MySQLNative, // MySQL and MariaDB: mysql_native_password
	"nativepassword":      MySQLNative,
	"scramsha256password": SCRAMSHA256,
	"passwordsha256hex":   SHA256Hex, // ClickHouse: password_sha256_hex
	"sha256":              SHA256Hex,
	"plain":               Plain,
	"plaintextpassword":   Plain, // ClickHouse: plaintext_password
	"cleartext":           Plain,
	"password":            Plain,
}

// Suggest returns the built-in format name nearest to name, or "" when
// none is near: the same name in another letter case or with other
// separators (scram_sha_256), an engine's own name (mysql_native_password),
// or a name at most a few edits away (scram-sha256, mysql-natve).
func Suggest(name string) string {
	n := normalize(name)
	if n == "" {
		return ""
	}
	for f := range registry {
		if normalize(f) == n {
			return f
		}
	}
	if f, ok := aliases[n]; ok {
		return f
	}
	best, bestDist := "", 0
	for _, f := range Names() {
		d := editDistance(n, normalize(f))
		if d <= max(1, len(n)/4) && (best == "" || d < bestDist) {
			best, bestDist = f, d
		}
	}
	return best
}

// normalize lower-cases name and drops separators and spaces.
func normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch r {
		case '-', '_', '.', ' ', '\t':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
