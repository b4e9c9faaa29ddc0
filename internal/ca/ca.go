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

// Package ca defines the CertificateAuthority the enrollment server signs
// through. Enrollment code knows only this interface; implementations live in
// sub-packages (embedded, certmanager).
package ca

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"net/url"
	"time"
)

// SigningRequest is a certificate request the enrollment server has already
// checked: the CSR's signature is valid and its only SAN is URI.
type SigningRequest struct {
	// CSR is the DER of the checked certificate request. External issuers
	// forward it; the embedded CA takes only its public key.
	CSR []byte
	// PublicKey of the CSR.
	PublicKey crypto.PublicKey
	// URI is the one URI SAN of the certificate, the workload URI in the
	// install's identity form (credo://workload/<uuid> by default).
	URI *url.URL
	// NotBefore is already backdated for clock skew by the caller.
	NotBefore time.Time
	// NotAfter is the end of the certificate's lifetime.
	NotAfter time.Time
}

// Issued is a signed certificate.
type Issued struct {
	// Certificate is the parsed leaf.
	Certificate *x509.Certificate
	// CertificatePEM is the leaf, PEM.
	CertificatePEM []byte
	// ChainPEM holds intermediates between the leaf and a bundle root, PEM; may be empty.
	ChainPEM []byte
}

// CertificateAuthority signs workload certificates and says which CAs peers must trust.
type CertificateAuthority interface {
	// Sign issues a certificate for req. It must put nothing in the
	// certificate that req does not ask for: one URI SAN, client and server
	// authentication, the lifetime given (an issuer may shorten it).
	Sign(ctx context.Context, req SigningRequest) (*Issued, error)
	// Bundle returns the PEM certificates of every CA whose certificates
	// may still be valid: during a rotation's overlap, old and new.
	Bundle(ctx context.Context) ([]byte, error)
}

// ErrUnavailable wraps failures of the signing backend (not of the request):
// the enrollment server answers 503 and the agent retries.
var ErrUnavailable = errors.New("certificate authority unavailable")
