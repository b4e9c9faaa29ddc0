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

package embedded

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca/anchor"
)

// The embedded CA's trust anchor is package anchor's, lifting ca.crt from
// the CA Secret. These names are kept for the callers that knew them here.
const (
	LabelAnchor      = anchor.Label
	AnchorFieldOwner = anchor.FieldOwner
)

// ErrForeignAnchor is anchor.ErrForeign.
var ErrForeignAnchor = anchor.ErrForeign

// Anchor is anchor.Anchor.
type Anchor = anchor.Anchor

// AnchorOptions are the options of the embedded CA's TrustAnchor: the
// release in the CA Secret's namespace, lifting its ca.crt.
func AnchorOptions(opts Options) anchor.Options {
	return anchor.Options{Namespace: opts.Namespace, Release: opts.Release, SecretName: opts.SecretName, Key: KeyBundle}
}

// NewAnchor returns the Anchor that declares the CA's TrustAnchor (see
// anchor.New).
func NewAnchor(opts Options, c client.Client, reader client.Reader) (*Anchor, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("embedded CA options: %w", err)
	}
	return anchor.New(AnchorOptions(opts), c, reader)
}
