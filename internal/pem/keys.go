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

package pem

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	stdpem "encoding/pem"
	"math/big"
)

// findKeyMarker returns the byte offset of the first textual private key
// marker in data, or -1. Markers are matched ASCII case-insensitively:
//
//   - "PRIVATE" or "SECRET", then any run (possibly empty) of whitespace,
//     underscores or hyphens, then "KEY". This covers every PEM private key
//     type (RSA, EC, DSA, ENCRYPTED, OPENSSH, PKCS#8), "PGP PRIVATE KEY
//     BLOCK", "PGP SECRET KEY", "PRIVATE_KEY", "private-key" and friends.
//   - "PuTTY-User-Key-File", the header of PuTTY .ppk files.
//
// The scan is linear in len(data).
func findKeyMarker(data []byte) int {
	for i := 0; i < len(data); i++ {
		if c := data[i] | 0x20; c != 'p' && c != 's' {
			continue
		}
		if hasFoldPrefix(data[i:], "putty-user-key-file") {
			return i
		}
		var j int
		switch {
		case hasFoldPrefix(data[i:], "private"):
			j = i + len("private")
		case hasFoldPrefix(data[i:], "secret"):
			j = i + len("secret")
		default:
			continue
		}
		for j < len(data) && isKeySeparator(data[j]) {
			j++
		}
		if hasFoldPrefix(data[j:], "key") {
			return i
		}
	}
	return -1
}

// hasFoldPrefix reports whether data starts with the lower-case ASCII word,
// ignoring ASCII case only.
func hasFoldPrefix(data []byte, word string) bool {
	if len(data) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := data[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

func isKeySeparator(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f', '_', '-':
		return true
	}
	return false
}

// findKeyShapedBlock decodes every PEM block stdpem can find anywhere in data
// (including blocks hidden after junk text and blocks of any type) and returns
// the 1-based number of the first one whose bytes are not a certificate but
// are shaped like a private key, or 0 if there is none. This catches key DER
// smuggled under a CERTIFICATE header or an innocuous-looking type.
func findKeyShapedBlock(data []byte) int {
	rest := data
	for n := 1; ; n++ {
		var p *stdpem.Block
		p, rest = stdpem.Decode(rest)
		if p == nil {
			return 0
		}
		if isPrivateKeyDER(p.Bytes) {
			return n
		}
	}
}

// isPrivateKeyDER reports whether der is not an X.509 certificate but is, or
// is structurally shaped like, a private key. The structural checks catch keys
// the x509 parsers reject (unsupported algorithms, inconsistent values,
// encrypted PKCS#8); they err on the side of calling something a key.
func isPrivateKeyDER(der []byte) bool {
	if len(der) == 0 || !looksLikePrivateKey(der) {
		return false
	}
	// No certificate matches the key shapes above (a certificate starts with
	// a nested SEQUENCE, every key shape with an INTEGER or an OID), but make
	// sure: a certificate is never reported as a key.
	_, err := x509.ParseCertificate(der)
	return err != nil
}

func looksLikePrivateKey(der []byte) bool {
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParseECPrivateKey(der); err == nil {
		return true
	}
	return hasShape(der, &pkcs8Shape{}) ||
		hasShape(der, &encryptedPKCS8Shape{}) ||
		hasShape(der, &pkcs1Shape{}) ||
		isSEC1Shape(der)
}

// pkcs8Shape is PKCS#8 PrivateKeyInfo / RFC 5958 OneAsymmetricKey.
type pkcs8Shape struct {
	Version    int
	Algorithm  pkix.AlgorithmIdentifier
	PrivateKey []byte
}

// encryptedPKCS8Shape is PKCS#8 EncryptedPrivateKeyInfo.
type encryptedPKCS8Shape struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

// pkcs1Shape is the head of PKCS#1 RSAPrivateKey; an RSAPublicKey has only
// two integers and does not match.
type pkcs1Shape struct {
	Version int
	N, E, D *big.Int
	P, Q    *big.Int
}

// sec1Shape is the head of SEC 1 ECPrivateKey.
type sec1Shape struct {
	Version    int
	PrivateKey []byte
}

// hasShape reports whether der starts with an ASN.1 value that unmarshals
// into v. Trailing data is tolerated: a key followed by junk is still a key.
// encoding/asn1 also tolerates extra trailing elements inside a SEQUENCE.
func hasShape(der []byte, v any) bool {
	_, err := asn1.Unmarshal(der, v)
	return err == nil
}

func isSEC1Shape(der []byte) bool {
	var s sec1Shape
	return hasShape(der, &s) && s.Version == 1
}
