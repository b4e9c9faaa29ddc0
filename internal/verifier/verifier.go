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

// Package verifier holds the stored-value formats of credential accounts: what
// an engine keeps for a password, computed by pure functions.
//
// A Format turns a password into the value written to the account Secret:
// a SCRAM-SHA-256 secret for PostgreSQL, a mysql_native_password hash for
// MariaDB and MySQL, a SHA-256 hex digest for ClickHouse, or the password
// itself for engines that only take plaintext. Formats are looked up by name
// with Lookup; an unknown name is refused, never guessed.
//
// Nothing here logs, retains or echoes a password: errors name the format and
// the rule that was broken, never the input.
package verifier

import (
	"crypto/sha1" //nolint:gosec // mysql_native_password is defined as SHA1(SHA1(p)).
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The names of the built-in formats.
const (
	// SCRAMSHA256 is PostgreSQL's SCRAM-SHA-256 secret,
	// SCRAM-SHA-256$4096:<salt>$<StoredKey>:<ServerKey>.
	SCRAMSHA256 = "scram-sha-256"
	// MySQLNative is the mysql_native_password hash: "*" and the upper-case
	// hex of SHA1(SHA1(password)).
	MySQLNative = "mysql-native"
	// SHA256Hex is the lower-case hex SHA-256 of the password, ClickHouse's
	// password_sha256_hex.
	SHA256Hex = "sha256-hex"
	// Plain stores the password itself.
	Plain = "plaintext"
)

// Format computes the value an engine stores for a password.
type Format interface {
	// Name is the format's registered name, for example "scram-sha-256".
	Name() string
	// Verifier returns the stored value for the password. username is passed
	// for formats that salt with it (none of the built-ins do). It must not
	// log or retain the password. The built-ins refuse an empty password and
	// one holding a NUL byte: no engine's client can present either.
	Verifier(username, password string) (string, error)
	// Plaintext reports whether the stored value is the password itself.
	Plaintext() bool
}

// ErrUnknownFormat is wrapped by Lookup's error for a name no format has.
var ErrUnknownFormat = errors.New("unknown format")

// ErrUnusablePassword is wrapped by a built-in Verifier's error for a password
// no engine's client could present: empty, or holding a NUL byte.
var ErrUnusablePassword = errors.New("unusable password")

var registry = map[string]Format{
	SCRAMSHA256: scramFormat{},
	MySQLNative: mysqlNativeFormat{},
	SHA256Hex:   sha256HexFormat{},
	Plain:       plaintextFormat{},
}

// Lookup returns the format registered under name. An unknown name is an
// *UnknownFormatError (wrapping ErrUnknownFormat) that names it, the
// nearest built-in name (Suggest) and the built-in formats; the name is
// never guessed.
func Lookup(name string) (Format, error) {
	if f, ok := registry[name]; ok {
		return f, nil
	}
	return nil, &UnknownFormatError{Name: name, Suggestion: Suggest(name)}
}

// Names returns the names of the registered formats, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkUsable refuses passwords no client can present. The error names the
// format and the rule, never the password.
func checkUsable(format, password string) error {
	if password == "" {
		return fmt.Errorf("verifier: %s: %w: empty", format, ErrUnusablePassword)
	}
	if strings.IndexByte(password, 0) >= 0 {
		return fmt.Errorf("verifier: %s: %w: contains a NUL byte", format, ErrUnusablePassword)
	}
	return nil
}

type mysqlNativeFormat struct{}

func (mysqlNativeFormat) Name() string    { return MySQLNative }
func (mysqlNativeFormat) Plaintext() bool { return false }

func (mysqlNativeFormat) Verifier(_, password string) (string, error) {
	if err := checkUsable(MySQLNative, password); err != nil {
		return "", err
	}
	first := sha1.Sum([]byte(password)) //nolint:gosec // the format's definition.
	second := sha1.Sum(first[:])        //nolint:gosec // the format's definition.
	const upperHex = "0123456789ABCDEF"
	var out [1 + 2*sha1.Size]byte
	out[0] = '*'
	for i, b := range second {
		out[1+2*i] = upperHex[b>>4]
		out[2+2*i] = upperHex[b&0x0f]
	}
	return string(out[:]), nil
}

type sha256HexFormat struct{}

func (sha256HexFormat) Name() string    { return SHA256Hex }
func (sha256HexFormat) Plaintext() bool { return false }

func (sha256HexFormat) Verifier(_, password string) (string, error) {
	if err := checkUsable(SHA256Hex, password); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:]), nil
}

type plaintextFormat struct{}

func (plaintextFormat) Name() string    { return Plain }
func (plaintextFormat) Plaintext() bool { return true }

func (plaintextFormat) Verifier(_, password string) (string, error) {
	if err := checkUsable(Plain, password); err != nil {
		return "", err
	}
	return password, nil
}
