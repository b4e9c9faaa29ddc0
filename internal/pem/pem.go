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

// Package pem is the private-key guard of credo's trust-anchor projection.
//
// A CA certificate is lifted from one key of a Secret that frequently also
// holds private key material (for example CloudNativePG's "<cluster>-ca"
// Secret, which carries both ca.crt and ca.key) and is written into a
// tenant-visible Secret. Parse is the only door between the two: it accepts a
// value only when the whole value is one or more PEM CERTIFICATE blocks that
// parse as X.509 certificates, and it refuses everything else. It fails
// closed: anything it does not positively recognise as a certificate bundle is
// refused, and anything that looks like private key material is refused with
// ReasonPrivateKey before any other check runs.
//
// Errors never echo input bytes. They describe problems by 1-based block
// number and byte offset only, so a refusal can be logged, put into a status
// condition or an event without leaking key material.
//
// Certificates (certificates.go) is the plain parse of a certificate list
// credo wrote itself or was given by a CA: no guard, and its refusals name
// the block type.
package pem

import (
	"bytes"
	"crypto/x509"
	stdpem "encoding/pem"
	"errors"
	"fmt"
)

// Reason classifies a refusal by Parse.
type Reason string

const (
	// ReasonPrivateKey means the input contains, or very likely contains,
	// private key material. It takes precedence over every other reason.
	ReasonPrivateKey Reason = "PrivateKeyDetected"
	// ReasonInvalid means the input is not exactly a bundle of PEM-encoded
	// X.509 certificates.
	ReasonInvalid Reason = "InvalidCertificate"
)

const (
	// maxCertificates is the largest number of certificates Parse accepts.
	maxCertificates = 64
	// maxInputSize is the largest input, in bytes, Parse accepts (1 MiB).
	maxInputSize = 1 << 20

	certificateType = "CERTIFICATE"
)

// Error is the error returned by Parse. Its message never contains input
// bytes: Detail is built only from fixed text, block numbers and byte offsets.
type Error struct {
	// Reason classifies the refusal.
	Reason Reason
	// Detail describes where and why the input was refused.
	Detail string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("refusing trust anchor (%s): %s", e.Reason, e.Detail)
}

// IsPrivateKey reports whether err is, or wraps, an *Error with Reason
// ReasonPrivateKey.
func IsPrivateKey(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == ReasonPrivateKey
}

// Bundle is a certificate bundle accepted by Parse.
type Bundle struct {
	// Certificates are the parsed certificates, in input order.
	Certificates []*x509.Certificate
	// PEM is the canonical re-encoding of Certificates: each certificate's
	// DER encoded as a CERTIFICATE block without headers, concatenated in
	// input order, and nothing else. Write this, never the input, to the
	// tenant-visible Secret.
	PEM []byte
}

// Parse accepts data only if the whole value is one or more PEM CERTIFICATE
// blocks and nothing else, and every block parses with x509.ParseCertificate.
// Whitespace (space, tab, CR, LF) is allowed around and between blocks, and
// CRLF line endings are allowed inside blocks.
//
// Checks run in this order, and the first failing one decides the Reason:
//
//  1. Private key material anywhere in data: a "PRIVATE KEY" or "SECRET KEY"
//     marker in any letter case and with any run of whitespace, underscores
//     or hyphens (or nothing) between the words, a PuTTY key file marker, or
//     a decodable PEM block of any type whose DER is not a certificate but
//     is shaped like a private key (PKCS#1, PKCS#8, encrypted PKCS#8, SEC 1)
//     → ReasonPrivateKey.
//  2. Empty or whitespace-only data → ReasonInvalid.
//  3. More than 1 MiB of data → ReasonInvalid. (Oversized input is
//     refused before any PEM decoding, so the key-shaped DER scan of check 1
//     does not run on it; the marker scan does.)
//  4. Non-whitespace text before, between or after blocks, malformed blocks,
//     blocks that are not exactly of type CERTIFICATE, blocks with headers,
//     more than 64 blocks, or a block that does not parse as an
//     X.509 certificate → ReasonInvalid.
//
// Parse does not judge whether the certificates are suitable trust anchors;
// see Check.
func Parse(data []byte) (*Bundle, error) {
	if off := findKeyMarker(data); off >= 0 {
		return nil, privateKeyError("a private key marker was found at byte offset %d", off)
	}
	if len(bytes.TrimLeft(data, whitespace)) == 0 {
		return nil, invalidError("no certificate: the value is empty or whitespace only")
	}
	if len(data) > maxInputSize {
		return nil, invalidError("the value is %d bytes, more than the limit of %d bytes", len(data), maxInputSize)
	}
	if n := findKeyShapedBlock(data); n > 0 {
		return nil, privateKeyError("PEM block %d (counting every decodable block) holds private key material", n)
	}
	return parseStrict(data)
}

// whitespace is the set of bytes allowed around and between blocks.
const whitespace = " \t\r\n"

// parseStrict walks data block by block and refuses anything that is not a
// CERTIFICATE block or whitespace.
func parseStrict(data []byte) (*Bundle, error) {
	bundle := &Bundle{}
	rest := data
	for block := 1; ; block++ {
		trimmed := bytes.TrimLeft(rest, whitespace)
		offset := len(data) - len(trimmed)
		rest = trimmed
		if len(rest) == 0 {
			break
		}
		// stdpem.Decode silently skips text before a block, so insist that
		// the block starts right here.
		if !bytes.HasPrefix(rest, []byte(beginMarker)) {
			return nil, invalidError("unexpected non-whitespace text at byte offset %d (after %d certificate(s))", offset, block-1)
		}
		if block > maxCertificates {
			return nil, invalidError("more than %d certificates", maxCertificates)
		}
		p, after := stdpem.Decode(rest)
		consumed := rest[:len(rest)-len(after)]
		// Decode may skip a malformed block and return a later one; a
		// block starting here contains exactly one BEGIN marker.
		if p == nil || bytes.Count(consumed, []byte(beginMarker)) != 1 {
			return nil, invalidError("block %d at byte offset %d is not a well-formed PEM block", block, offset)
		}
		if p.Type != certificateType {
			return nil, invalidError("block %d at byte offset %d is %s, not a %s block", block, offset, describeType(p.Type), certificateType)
		}
		if len(p.Headers) > 0 {
			return nil, invalidError("block %d at byte offset %d has PEM headers; certificates must have none", block, offset)
		}
		// The x509 error is deliberately dropped: some of its messages
		// quote parts of the certificate.
		cert, err := x509.ParseCertificate(p.Bytes)
		if err != nil {
			return nil, invalidError("block %d at byte offset %d does not parse as an X.509 certificate", block, offset)
		}
		bundle.Certificates = append(bundle.Certificates, cert)
		bundle.PEM = append(bundle.PEM, stdpem.EncodeToMemory(&stdpem.Block{Type: certificateType, Bytes: cert.Raw})...)
		rest = after
	}
	if len(bundle.Certificates) == 0 {
		// Unreachable given the whitespace check in Parse; kept to fail closed.
		return nil, invalidError("no certificate")
	}
	return bundle, nil
}

const beginMarker = "-----BEGIN "

// safeTypeDescriptions maps well-known PEM block types to fixed descriptions
// that may appear in error messages. The input's type string itself is never
// echoed.
var safeTypeDescriptions = map[string]string{
	"PUBLIC KEY":              "a public key",
	"RSA PUBLIC KEY":          "an RSA public key",
	"CERTIFICATE REQUEST":     "a certificate signing request",
	"NEW CERTIFICATE REQUEST": "a certificate signing request",
	"X509 CRL":                "a certificate revocation list",
	"TRUSTED CERTIFICATE":     "an OpenSSL trusted-certificate block",
	"ATTRIBUTE CERTIFICATE":   "an attribute certificate",
	"PKCS7":                   "a PKCS#7 structure",
	"CMS":                     "a CMS structure",
	"EC PARAMETERS":           "EC parameters",
	"DH PARAMETERS":           "DH parameters",
	"X9.42 DH PARAMETERS":     "DH parameters",
	"SSH2 PUBLIC KEY":         "an SSH public key",
}

func describeType(t string) string {
	if d, ok := safeTypeDescriptions[t]; ok {
		return d
	}
	return "a block of another type"
}

func invalidError(format string, args ...any) *Error {
	return &Error{Reason: ReasonInvalid, Detail: fmt.Sprintf(format, args...)}
}

func privateKeyError(format string, args ...any) *Error {
	return &Error{Reason: ReasonPrivateKey, Detail: fmt.Sprintf(format, args...)}
}
