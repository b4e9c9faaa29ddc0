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

package publish

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish/signing"
)

// TestReleaseChecksItsInputsFirst: the checks run before anything is built
// (Root is not a checkout: getting past them fails on git, not on a build).
func TestReleaseChecksItsInputsFirst(t *testing.T) {
	g := NewWithT(t)
	key, err := signing.GenerateKey()
	g.Expect(err).NotTo(HaveOccurred())
	signer, err := signing.NewSigner(key, nil)
	g.Expect(err).NotTo(HaveOccurred())
	for _, tc := range []struct {
		name    string
		version string
		signer  *signing.Signer
		errMsg  string
	}{
		{"a version without its v", "0.1.0", signer, `version "0.1.0" is not`},
		{"a version that is not semantic", "vX", signer, `version "vX" is not`},
		{"a major version alone", "v1", signer, `version "v1" is not`},
		{"a version without its patch", "v1.2", signer, `version "v1.2" is not`},
		{"a version with build metadata, which no OCI tag can hold", "v0.1.0+build.1", signer, `version "v0.1.0+build.1" is not`},
		{"no version", "", signer, `version "" is not`},
		{"no signer", "v0.1.0", nil, "no signing key: a release is signed"},
		{"no signer for a prerelease", "v0.1.0-rc.1", nil, "no signing key: a release is signed"},
		{"a good version and a signer get past the checks", "v0.1.0-rc.1", signer, "git show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := t.TempDir()
			_, err := Release(t.Context(), Options{Root: t.TempDir(), Out: out, Version: tc.version, Signer: tc.signer, AllowDirty: true})
			g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
			g.Expect(out).To(BeADirectory(), "a refused release leaves its output alone")
		})
	}
}
