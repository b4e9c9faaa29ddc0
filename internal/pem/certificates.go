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
	stdpem "encoding/pem"
	"fmt"
)

// CertificateError is a CERTIFICATE block x509 does not parse, from
// Certificates or CertificatesAmong. Err is x509's error: callers word it
// (their certificate is a CA, a serving certificate, ...).
type CertificateError struct {
	// Err is x509's error.
	Err error
}

// Error returns x509's message.
func (e *CertificateError) Error() string { return e.Err.Error() }

// Unwrap returns x509's error.
func (e *CertificateError) Unwrap() error { return e.Err }

// Certificates is the one parse of a PEM certificate list credo wrote or
// was given by a CA (not by a tenant: that is Parse's job): the
// certificates of the successive PEM blocks of data, in order. A block of
// another type is refused ("unexpected PEM block" naming its type), a
// certificate x509 does not parse is a *CertificateError, and text after
// the last block is ignored, as encoding/pem does. No block is no
// certificate and no error. Its errors never hold certificate bytes but
// name an unexpected block's type.
func Certificates(data []byte) ([]*x509.Certificate, error) {
	return certificates(data, false)
}

// CertificatesAmong is Certificates for data that may hold other blocks
// beside the certificates (a key next to its certificate): it passes over
// every block that is not a CERTIFICATE.
func CertificatesAmong(data []byte) ([]*x509.Certificate, error) {
	return certificates(data, true)
}

func certificates(data []byte, others bool) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *stdpem.Block
		block, data = stdpem.Decode(data)
		switch {
		case block == nil:
			return out, nil
		case block.Type != certificateType && others:
			continue
		case block.Type != certificateType:
			return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, &CertificateError{Err: err}
		}
		out = append(out, c)
	}
}
