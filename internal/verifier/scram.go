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
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
)

const (
	// SCRAMIterations is the iteration count of the secrets Verifier makes,
	// PostgreSQL's default (scram_iterations = 4096).
	SCRAMIterations = 4096
	// SCRAMSaltLen is the length in bytes of the random salt Verifier draws,
	// PostgreSQL's SCRAM_DEFAULT_SALT_LEN.
	SCRAMSaltLen = 16
)

type scramFormat struct{}

func (scramFormat) Name() string    { return SCRAMSHA256 }
func (scramFormat) Plaintext() bool { return false }

func (scramFormat) Verifier(_, password string) (string, error) {
	if err := checkUsable(SCRAMSHA256, password); err != nil {
		return "", err
	}
	salt := make([]byte, SCRAMSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("verifier: %s: reading a salt: %w", SCRAMSHA256, err)
	}
	return scramSecret(password, salt, SCRAMIterations)
}

// SCRAMWithSalt returns PostgreSQL's SCRAM-SHA-256 secret for password with
// the given salt and iteration count, byte for byte what PostgreSQL stores in
// pg_authid.rolpassword for them:
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// in standard padded base64 (RFC 5802, RFC 7677). The password is prepared
// with SASLprep exactly as PostgreSQL prepares it (see saslprep.go). It is
// meant for known-answer tests; Verifier draws a random salt instead. It
// returns "" if the parameters are refused: iterations below 1, or, in FIPS
// 140-only mode, a salt shorter than 16 bytes.
func SCRAMWithSalt(password string, salt []byte, iterations int) string {
	s, err := scramSecret(password, salt, iterations)
	if err != nil {
		return ""
	}
	return s
}

func scramSecret(password string, salt []byte, iterations int) (string, error) {
	if iterations < 1 {
		return "", fmt.Errorf("verifier: %s: iterations must be positive", SCRAMSHA256)
	}
	salted, err := pbkdf2.Key(sha256.New, pgSASLprep(password), salt, iterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("verifier: %s: deriving the salted password: %w", SCRAMSHA256, err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	clear(salted)
	clear(clientKey)

	enc := base64.StdEncoding
	buf := make([]byte, 0, len("SCRAM-SHA-256$")+10+1+enc.EncodedLen(len(salt))+1+2*enc.EncodedLen(sha256.Size)+1)
	buf = append(buf, "SCRAM-SHA-256$"...)
	buf = strconv.AppendInt(buf, int64(iterations), 10)
	buf = append(buf, ':')
	buf = enc.AppendEncode(buf, salt)
	buf = append(buf, '$')
	buf = enc.AppendEncode(buf, storedKey[:])
	buf = append(buf, ':')
	buf = enc.AppendEncode(buf, serverKey)
	return string(buf), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
