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
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// pgVectors are secrets PostgreSQL 15.18 (Debian 15.18-0+deb12u1) computed
// itself. They were obtained on a scratch cluster (initdb -E UTF8 --locale=C)
// with psql and client_encoding UTF8:
//
//	SET password_encryption = 'scram-sha-256';
//	CREATE ROLE v1 PASSWORD 'pencil';
//	CREATE ROLE v4 PASSWORD E'pass\u200Bword';   -- and so on
//	SELECT rolname, rolpassword FROM pg_authid;
//
// SCRAMWithSalt, given the salt PostgreSQL drew, must reproduce each byte for
// byte. The cases cover the ASCII fast path, NFKC of non-ASCII letters, CJK,
// and PostgreSQL's particular SASLprep: U+200B mapped to a space (not to
// nothing), a ligature normalised, an emoji (unassigned in Unicode 3.2) and
// U+0340 (prohibited before normalisation, allowed after it) falling back to
// the raw bytes.
var pgVectors = []struct {
	name, password, secret string
}{
	{"ascii", "pencil", "SCRAM-SHA-256$4096:SWgdG3/vW/Spv1bZPa0cEg==$C32XcK/vUsd3PrKNzdXOdbIsXl6/WNv3QYeTvMoHtAg=:vJwnJqbHE3kz5rc5R0HaRBulOi+qnA73SSiqEuFUGlo="},
	{"latin1", "pässwörd", "SCRAM-SHA-256$4096:k5lWOW4WCkHv9Mc9FKq/zA==$P6gPmTJy7e+/4XetO14/D4aMGsqdp4fgbGj/6ckxMMg=:Pp1Ws2AuK+MZyaQh71nVxNMjFd+Cj90e8ApCjkEfnlQ="},
	{"cjk", "密码", "SCRAM-SHA-256$4096:TgVSqp+WpLSbqyMWW+3bSg==$Z6X3ROc/I9GjAQoxyR6huE9l/WFgslxywoqA37Bm6vI=:RYw+HxtvUcpGEdrD5EVyXiOnIFWKBOMgmJ58HlQ85Wo="},
	{"zero-width-space", "pass\u200bword", "SCRAM-SHA-256$4096:YioAgnKSLSMs0t4ENvnX4g==$HKBo6PBm62MTWTegL4g+XtHgMYqwED1mQFASaOIYZcE=:czfoYohZv7AHZNet1DcO8Qrt8Ebb1BVy5gKjsWyJcf4="},
	{"ligature", "\ufb01le", "SCRAM-SHA-256$4096:+ZcgOgGbsp75zFYkcBfWXg==$lJ/WvRF5ZmIg9Hao705m9WtiaxVd67eH3i95vpU4/Nk=:zF+vs/+qm0dGo5urTsD9rTjxYFdfD6RpvSGoH5cLYsw="},
	{"emoji", "key\U0001f511", "SCRAM-SHA-256$4096:uBJOlmK2j5torfGnBd3RaQ==$DofRiRA6I6Nrr34uLTMon3gfo8z0kWdZjfvZWunzJfk=:XIHnOvMyzNBvOWJw16WcSmOQeftcnF0AThXKqkw6dm8="},
	{"prohibited-before-nfkc", "a\u0340b", "SCRAM-SHA-256$4096:FBaGYiAu5k3GkjK2rKtAEg==$BcS16SUDl3c98J6qq0aYkTaCGKyZcK2gbufxhnJ3/mk=:ocRjHGf5HZ+QaU86Q61m2gPN2bGuGqYkp5ZGicYppMg="},
}

// saltOf returns the decoded salt of a SCRAM secret.
func saltOf(g Gomega, secret string) []byte {
	rest, ok := strings.CutPrefix(secret, "SCRAM-SHA-256$4096:")
	g.Expect(ok).To(BeTrue())
	b64, _, ok := strings.Cut(rest, "$")
	g.Expect(ok).To(BeTrue())
	salt, err := base64.StdEncoding.DecodeString(b64)
	g.Expect(err).NotTo(HaveOccurred())
	return salt
}

func TestSCRAMWithSaltMatchesPostgreSQL(t *testing.T) {
	for _, v := range pgVectors {
		t.Run(v.name, func(t *testing.T) {
			g := NewWithT(t)
			salt := saltOf(g, v.secret)
			g.Expect(salt).To(HaveLen(SCRAMSaltLen))
			// Compared as a bool so a mismatch never prints a secret.
			g.Expect(SCRAMWithSalt(v.password, salt, 4096) == v.secret).To(BeTrue(), "secret for case %s differs from PostgreSQL's", v.name)
		})
	}
}

func TestSCRAMWithSaltRefusesNoIterations(t *testing.T) {
	g := NewWithT(t)
	g.Expect(SCRAMWithSalt("pencil", make([]byte, 16), 0)).To(BeEmpty())
	g.Expect(SCRAMWithSalt("pencil", make([]byte, 16), -1)).To(BeEmpty())
	g.Expect(SCRAMWithSalt("pencil", make([]byte, 16), 1)).To(HavePrefix("SCRAM-SHA-256$1:"))
}

func TestSCRAMVerifierShape(t *testing.T) {
	g := NewWithT(t)
	f, err := Lookup(SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	re := `^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$`
	seen := map[string]bool{}
	for _, p := range []string{"pencil", "pässwörd", "key\U0001f511"} {
		a, err := f.Verifier("u", p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).To(MatchRegexp(re))
		// The salt is fresh every time, and the secret is SCRAMWithSalt's for it.
		b, err := f.Verifier("u", p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).NotTo(Equal(b))
		g.Expect(SCRAMWithSalt(p, saltOf(g, a), SCRAMIterations) == a).To(BeTrue())
		salt := string(saltOf(g, a))
		g.Expect(seen[salt]).To(BeFalse())
		seen[salt] = true
	}
}
