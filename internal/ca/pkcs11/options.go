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

// Package pkcs11 keeps the embedded CA's keys in a PKCS#11 token
// (github.com/ThalesGroup/crypto11): generated in the token, sensitive and
// never extractable, found by id, destroyed when their CA leaves the
// bundle. Token implements embedded.KeyStore.
//
// The token is reached through cgo (github.com/miekg/pkcs11 loads the
// token's module, a shared library): only a build with the tag pkcs11 and
// CGO_ENABLED=1 holds it (make build-pkcs11). The static binaries of the
// release image are built without it, and Open refuses with ErrNotBuilt.
package pkcs11

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// DefaultKeyLabel is the label prefix of the keys generated in the token.
const DefaultKeyLabel = "credo-enrollment-ca"

// Flags of Options.
const (
	FlagModule     = "enrollment-ca-pkcs11-module"
	FlagTokenLabel = "enrollment-ca-pkcs11-token-label"
	FlagPINFile    = "enrollment-ca-pkcs11-pin-file"
	FlagKeyLabel   = "enrollment-ca-pkcs11-key-label"
)

// ErrNotBuilt is Open's error in a binary built without PKCS#11 support.
var ErrNotBuilt = errors.New("this binary was built without PKCS#11 support (CGO_ENABLED=0, no pkcs11 build tag): " +
	"run an enrollment-controller built by make build-pkcs11 to keep the CA key in a PKCS#11 token")

// Options name the token the embedded CA keeps its keys in.
//
//	opts := pkcs11.Options{}
//	opts.BindFlags(pflag.CommandLine)
//	pflag.Parse()
//	if opts.Enabled() {
//		token, err := pkcs11.Open(opts)
//		...
//		caOpts.Keys = token
//	}
type Options struct {
	// Module is the path of the token's PKCS#11 module, a shared library
	// (libsofthsm2.so, a vendor's HSM client). Empty: the keys are kept in
	// the CA Secret.
	Module string
	// TokenLabel selects the token by its label.
	TokenLabel string
	// PINFile is the file holding the user PIN (a mounted Secret); one
	// trailing newline is ignored. The PIN is never logged.
	PINFile string
	// KeyLabel is the prefix of the CKA_LABEL of the keys generated: the
	// label is <prefix>-<UTC time of generation>.
	KeyLabel string
}

// BindFlags binds the options to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Module, FlagModule, "",
		"The PKCS#11 module (a shared library) of the token the embedded CA keeps its keys in; empty keeps them in the CA Secret. Needs a binary built by make build-pkcs11.")
	fs.StringVar(&o.TokenLabel, FlagTokenLabel, "", "The label of the PKCS#11 token the embedded CA keeps its keys in.")
	fs.StringVar(&o.PINFile, FlagPINFile, "",
		"The file holding the PKCS#11 token's user PIN (mount it from a Secret); the PIN is never logged.")
	fs.StringVar(&o.KeyLabel, FlagKeyLabel, DefaultKeyLabel,
		"The label prefix of the keys the embedded CA generates in the PKCS#11 token: <prefix>-<UTC time>.")
}

// Enabled says whether a token is named: any of the flags but the key
// label set. Validate then requires all of them.
func (o *Options) Enabled() bool {
	return o.Module != "" || o.TokenLabel != "" || o.PINFile != ""
}

// Validate reports options a token cannot be opened with, and options
// given to a binary that cannot open one.
func (o *Options) Validate() error {
	if !o.Enabled() {
		return nil
	}
	if !Built {
		return ErrNotBuilt
	}
	var errs []error
	for _, f := range []struct{ flag, value string }{
		{FlagModule, o.Module}, {FlagTokenLabel, o.TokenLabel}, {FlagPINFile, o.PINFile}, {FlagKeyLabel, o.KeyLabel},
	} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("--%s is required with a PKCS#11 token", f.flag))
		}
	}
	return errors.Join(errs...)
}
