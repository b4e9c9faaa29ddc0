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

package account

import (
	"fmt"
	"strings"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// FormatRefusal is why an account has no format credo computes. It names
// the format, never a password.
type FormatRefusal struct {
	// Reason is one of the FormatRefused condition's reasons:
	// UnsupportedFormatKind, UnknownFormat or PlatformPlaintext.
	Reason string
	// Err says what is refused; for an unknown name it is the
	// *verifier.UnknownFormatError.
	Err error
}

func (e *FormatRefusal) Error() string { return e.Err.Error() }

func (e *FormatRefusal) Unwrap() error { return e.Err }

// FormatOf is the one resolution of acct's verifier format, for the
// controller, the access API and the migration alike. It refuses, with a
// *FormatRefusal, a format kind credo does not compute (only BuiltIn is),
// a name no built-in format has, and the plaintext format for a platform
// account that does not declare its delivery (spec.plaintext): a platform
// plaintext is written only for a consumer that needs it, where the
// controller checked no tenant may read it (PlaintextExposed).
func FormatOf(acct *credv1.CredentialAccount) (verifier.Format, error) {
	if kind := acct.GetFormatKind(); kind != credv1.FormatBuiltIn {
		return nil, &FormatRefusal{Reason: credv1.UnsupportedFormatKindReason,
			Err: fmt.Errorf("format kind %s is part of the API but not built yet; use kind BuiltIn with one of %s", kind, strings.Join(verifier.Names(), ", "))}
	}
	f, err := verifier.Lookup(acct.Spec.Format.Name)
	if err != nil {
		// The error names the format, the nearest built-in one and the
		// built-in formats.
		return nil, &FormatRefusal{Reason: credv1.UnknownFormatReason, Err: err}
	}
	if f.Plaintext() && acct.GetOwner() == credv1.OwnerPlatform && acct.Spec.Plaintext == nil {
		return nil, &FormatRefusal{Reason: credv1.PlatformPlaintextReason,
			Err: fmt.Errorf("a platform account of format %s needs spec.plaintext: the plaintext is delivered only for a consumer that needs it, where no tenant may read it", f.Name())}
	}
	return f, nil
}
