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

// Package signing signs OCI artifacts the way `cosign sign --key` does,
// offline and with no transparency log: a simple-signing payload naming the
// artifact's digest, signed with an ECDSA P-256 key, stored as an OCI image
// tagged sha256-<hex>.sig in the artifact's repository. cosign, Flux's
// source-controller (spec.verify.provider: cosign) and policy engines verify
// it with the public key alone (cosign verify --key cosign.pub
// --insecure-ignore-tlog).
//
// The signature is deterministic (RFC 6979): one key and one artifact give
// one signature, so a rebuilt release is identical, signatures included.
package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// SimpleSigningMediaType is the media type of the signed payload, as cosign
// writes and reads it.
const SimpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"

// SignatureAnnotation is the layer annotation holding the payload's
// signature, base64-encoded, as cosign writes and reads it.
const SignatureAnnotation = "dev.cosignproject.cosign/signature"

// GenerateKey returns a new signing key, PEM-encoded as PKCS#8.
func GenerateKey() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return cryptoutils.MarshalPrivateKeyToPEM(key)
}

// Signer signs with one private key.
type Signer struct {
	key *ecdsa.PrivateKey
}

// NewSigner reads an ECDSA P-256 private key: PKCS#8 or SEC 1 PEM, or the
// encrypted PEM `cosign generate-key-pair` writes, with its password.
func NewSigner(pemBytes, password []byte) (*Signer, error) {
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	switch {
	case !ok:
		return nil, fmt.Errorf("the signing key is a %T, not an ECDSA P-256 key", key)
	case ec.Curve != elliptic.P256():
		return nil, fmt.Errorf("the signing key is ECDSA %s, not an ECDSA P-256 key", ec.Curve.Params().Name)
	}
	return &Signer{key: ec}, nil
}

// PublicKeyPEM is the public key to publish: what `cosign verify --key` and
// a Flux OCIRepository's spec.verify.secretRef take.
func (s *Signer) PublicKeyPEM() ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(s.key.Public())
}

// Sign returns the signature image of the artifact at repository@digest,
// to be stored in repository under Tag(digest).
func (s *Signer) Sign(repository string, digest v1.Hash) (v1.Image, error) {
	ref, err := name.NewDigest(repository + "@" + digest.String())
	if err != nil {
		return nil, err
	}
	body, err := payload.Cosign{Image: ref}.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	sig, err := s.key.Sign(nil, sum[:], crypto.SHA256) // nil: deterministic, RFC 6979
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(body, SimpleSigningMediaType),
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
}

// Tag is the tag cosign stores the signature of digest under.
func Tag(digest v1.Hash) string {
	return TagFor(digest, "sig")
}

// TagFor is cosign's tag for something attached to digest: "sig" for a
// signature, "sbom" for an SBOM.
func TagFor(digest v1.Hash, suffix string) string {
	return strings.Replace(digest.String(), ":", "-", 1) + "." + suffix
}
