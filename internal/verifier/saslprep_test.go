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

package verifier

import (
	"testing"

	. "github.com/onsi/gomega"
)

// The expected values follow PostgreSQL's pg_saslprep (src/common/saslprep.c).
// tests/engines checks the same inputs (all but the invalid UTF-8 one, which
// SQL cannot carry) against PostgreSQL 15 itself, comparing the secrets the
// server computes from plaintext with SCRAMWithSalt's.
func TestPGSASLprep(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"ascii unchanged", "pencil", "pencil"},
		{"ascii controls unchanged", "a\x01\tb\x7f", "a\x01\tb\x7f"},
		{"invalid utf-8 raw", "p\xffss", "p\xffss"},
		{"latin letters", "pässwörd", "pässwörd"},
		{"decomposed to composed", "pa\u0308ss", "päss"},
		{"no-break space to space", "a\u00a0b", "a b"},
		{"zero-width space to space, not nothing", "pass\u200bword", "pass word"},
		{"ideographic space", "a\u3000b", "a b"},
		{"soft hyphen to nothing", "pass\u00adword", "password"},
		{"mongolian todo soft hyphen to nothing", "pass\u1806wörd", "passwörd"},
		{"variation selector to nothing", "ä\ufe0f", "ä"},
		{"ligature", "\ufb01le", "file"},
		{"fullwidth", "ｐａｓｓ", "pass"},
		{"roman numeral", "\u2168", "IX"},
		{"cjk", "密码", "密码"},
		{"emoji is unassigned in 3.2: raw", "key\U0001f511", "key\U0001f511"},
		{"only mapped-to-nothing: raw", "\u00ad", "\u00ad"},
		{"prohibited before nfkc: raw", "a\u0340b", "a\u0340b"},
		{"private use: raw", "ä\ue000", "ä\ue000"},
		{"non-ascii control: raw", "ä\u0085", "ä\u0085"},
		{"rtl mark: raw", "ä\u200f", "ä\u200f"},
		{"ascii control with non-ascii: raw", "ä\x01", "ä\x01"},
		{"hebrew only", "\u05d0\u05d1", "\u05d0\u05d1"},
		{"hebrew with latin: raw", "\u05d0a\u05d1", "\u05d0a\u05d1"},
		{"hebrew not first: raw", "1\u05d0", "1\u05d0"},
		{"arabic presentation form", "\ufe8d\ufe8f", "\u0627\u0628"},
	} {
		t.Run(c.name, func(t *testing.T) {
			NewWithT(t).Expect(pgSASLprep(c.in)).To(Equal(c.want))
		})
	}
}

func FuzzPGSASLprep(f *testing.F) {
	for _, s := range []string{"pencil", "pässwörd", "\u00ad", "a\u0340b", "\u05d0a", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := pgSASLprep(s)
		if out == "" && s != "" {
			t.Fatal("a non-empty password prepared to nothing")
		}
		if isASCII(s) && out != s {
			t.Fatal("an ASCII password was changed")
		}
	})
}
