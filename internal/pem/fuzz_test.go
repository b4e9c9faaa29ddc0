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

package pem_test

import (
	"bytes"
	stdpem "encoding/pem"
	"errors"
	"testing"

	"github.com/credo-dev/credo/internal/pem"
)

// FuzzParse checks Parse's contract on arbitrary input:
//
//   - on success the input has no private key marker, the canonical PEM
//     contains only CERTIFICATE blocks and parsing it again is idempotent;
//   - on failure the error is a *pem.Error with a known Reason.
func FuzzParse(f *testing.F) {
	fx := fixtures()
	seeds := [][]byte{
		fx.rootPEM,
		join(fx.intermediatePEM, fx.rootPEM),
		crlf(join(fx.rootPEM, fx.leafPEM)),
		join([]byte(" \n\t"), fx.rootPEM, []byte("\r\n ")),
		[]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		[]byte("-----BEGIN CERTIFICATE-----\r\n\r\n-----END CERTIFICATE-----"),
		[]byte("-----BEGIN A-----\n-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		[]byte("\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n"),
		[]byte("prIvAtE\t_-kEy"),
		[]byte("SECRETKEY"),
	}
	for _, r := range privateKeyInputs() {
		seeds = append(seeds, r.input)
	}
	for _, r := range invalidInputs() {
		if len(r.input) < 64*1024 { // keep the corpus small; size is tested elsewhere
			seeds = append(seeds, r.input)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		bundle, err := pem.Parse(data)
		if err != nil {
			var perr *pem.Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v (%T) is not a *pem.Error", err, err)
			}
			if perr.Reason != pem.ReasonPrivateKey && perr.Reason != pem.ReasonInvalid {
				t.Fatalf("unknown reason %q", perr.Reason)
			}
			if bundle != nil {
				t.Fatalf("Parse returned a bundle together with error %v", err)
			}
			return
		}

		if i := bytes.Index(bytes.ToUpper(data), []byte("PRIVATE KEY")); i >= 0 {
			t.Fatalf("accepted input with a PRIVATE KEY marker at byte %d", i)
		}
		if n := len(bundle.Certificates); n < 1 || n > 64 {
			t.Fatalf("accepted %d certificates", n)
		}
		if len(data) > 1<<20 {
			t.Fatalf("accepted %d bytes", len(data))
		}
		expectOnlyCertificateBlocks(t, bundle)

		again, err := pem.Parse(bundle.PEM)
		if err != nil {
			t.Fatalf("canonical PEM does not parse again: %v", err)
		}
		if !bytes.Equal(again.PEM, bundle.PEM) {
			t.Fatalf("parsing the canonical PEM is not idempotent")
		}
		if len(again.Certificates) != len(bundle.Certificates) {
			t.Fatalf("got %d certificates from the canonical PEM, want %d", len(again.Certificates), len(bundle.Certificates))
		}
		for i := range bundle.Certificates {
			if !again.Certificates[i].Equal(bundle.Certificates[i]) {
				t.Fatalf("certificate %d changed when parsing the canonical PEM", i)
			}
		}
	})
}

// expectOnlyCertificateBlocks fails unless bundle.PEM is exactly the
// concatenation of header-less CERTIFICATE blocks of bundle.Certificates.
func expectOnlyCertificateBlocks(t *testing.T, bundle *pem.Bundle) {
	t.Helper()
	rest := bundle.PEM
	blocks := 0
	for ; len(rest) > 0; blocks++ {
		i := blocks
		var p *stdpem.Block
		p, rest = stdpem.Decode(rest)
		switch {
		case p == nil:
			t.Fatalf("canonical PEM has trailing bytes after %d blocks", i)
		case p.Type != "CERTIFICATE" || len(p.Headers) != 0:
			t.Fatalf("canonical PEM block %d is not a plain CERTIFICATE block", i)
		case i >= len(bundle.Certificates) || !bytes.Equal(p.Bytes, bundle.Certificates[i].Raw):
			t.Fatalf("canonical PEM block %d does not match certificate %d", i, i)
		}
	}
	if blocks != len(bundle.Certificates) {
		t.Fatalf("canonical PEM has %d blocks for %d certificates", blocks, len(bundle.Certificates))
	}
}
