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

package enrollment

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/ca/pkcs11"
	"github.com/credo-dev/credo/internal/enrollment"
)

// The embedded CA's overlap after a rotation must cover the longest
// certificate plus the longest grace the flags allow; the defaults do.
func TestTheEmbeddedCAOverlapMustCoverTheMaxima(t *testing.T) {
	limits := enrollment.DefaultLimits()
	if err := checkOverlap(AuthorityEmbedded, embedded.NewOptions(), limits); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	short := embedded.NewOptions()
	short.Overlap = limits.MaxCertificateTTL
	err := checkOverlap(AuthorityEmbedded, short, limits)
	if err == nil || !strings.Contains(err.Error(), "--enrollment-ca-overlap") || !strings.Contains(err.Error(), "--max-renewal-grace") {
		t.Fatalf("an overlap shorter than the maxima: %v", err)
	}
	if err := checkOverlap(AuthorityCertManager, short, limits); err != nil {
		t.Fatalf("cert-manager keeps its own overlap: %v", err)
	}
	limits.MaxCertificateTTL = 24 * time.Hour
	if err := checkOverlap(AuthorityEmbedded, short, limits); err != nil {
		t.Fatalf("lower maxima within the overlap are refused: %v", err)
	}
}

// The PKCS#11 flags name a whole token, for the embedded CA only; a binary
// built without PKCS#11 support (the static default) refuses them, saying
// which build to run.
func TestThePKCS11FlagsAreRefusedWhereTheyCannotWork(t *testing.T) {
	whole := pkcs11.Options{Module: "/usr/lib/softhsm/libsofthsm2.so", TokenLabel: "credo", PINFile: "/etc/credo/pin",
		KeyLabel: pkcs11.DefaultKeyLabel}
	o := NewListenerOptions()
	o.PKCS11 = whole
	err := o.Validate()
	if pkcs11.Built {
		if err != nil {
			t.Fatalf("a whole token is refused: %v", err)
		}
	} else if !errors.Is(err, pkcs11.ErrNotBuilt) || !strings.Contains(err.Error(), "make build-pkcs11") {
		t.Fatalf("a binary without PKCS#11 support: %v", err)
	}
	o.Authority = AuthorityCertManager
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--certificate-authority=cert-manager") {
		t.Fatalf("PKCS#11 flags with cert-manager: %v", err)
	}
	o = NewListenerOptions()
	if err := o.Validate(); err != nil {
		t.Fatalf("no token named: %v", err)
	}
}
