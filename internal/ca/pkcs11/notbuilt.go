//go:build !pkcs11

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

package pkcs11

import "crypto"

// Built says whether this binary can open a PKCS#11 token: it cannot.
const Built = false

// Token is a PKCS#11 token; this binary cannot open one.
type Token struct{}

// Open refuses: this binary was built without PKCS#11 support.
func Open(Options) (*Token, error) { return nil, ErrNotBuilt }

// Generate refuses, as Open does.
func (*Token) Generate() (crypto.Signer, []byte, error) { return nil, nil, ErrNotBuilt }

// Find refuses, as Open does.
func (*Token) Find([]byte) (crypto.Signer, error) { return nil, ErrNotBuilt }

// Destroy refuses, as Open does.
func (*Token) Destroy([]byte) error { return ErrNotBuilt }

// KeyIDs refuses, as Open does.
func (*Token) KeyIDs() ([][]byte, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (*Token) Close() error { return nil }
