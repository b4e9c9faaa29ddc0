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

package jointoken

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestANewTokenParsesAndMatchesItsHash(t *testing.T) {
	g := NewWithT(t)
	tok, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := Parse(" " + tok.String() + "\n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(tok))
	g.Expect(SecretMatches(tok.Hash(), got.Secret)).To(BeTrue())
	other, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(SecretMatches(tok.Hash(), other.Secret)).To(BeFalse())
}

func TestParseRefusesMalformedTokensWithoutEchoingThem(t *testing.T) {
	tok, err := New()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, s := range []string{"", tok.ID, tok.ID + "." + tok.Secret[1:], tok.ID + "." + "1" + tok.Secret[1:], tok.Secret + "." + tok.ID} {
		g := NewWithT(t)
		_, err := Parse(s)
		g.Expect(err).To(MatchError(errMalformedToken))
		if s != "" {
			g.Expect(err.Error()).NotTo(ContainSubstring(s))
		}
	}
}
