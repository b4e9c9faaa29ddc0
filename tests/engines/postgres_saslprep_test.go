//go:build engines

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

package engines

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/verifier"
)

// saslprepCases are inputs where PostgreSQL's SASLprep takes one of its less
// obvious paths: mapping, normalisation, and each reason to fall back to the
// raw bytes.
var saslprepCases = []credCase{
	{name: "mongolian-todo-soft-hyphen", password: "pass\u1806wörd"},
	{name: "only-soft-hyphen", password: "\u00ad"},
	{name: "only-zero-width-space", password: "\u200b"},
	{name: "combining-grave-tone-mark", password: "a\u0340b"},
	{name: "no-break-space", password: "a\u00a0b"},
	{name: "private-use", password: "ä\ue000"},
	{name: "c1-control", password: "ä\u0085"},
	{name: "right-to-left-mark", password: "ä\u200f"},
	{name: "ascii-control-with-unicode", password: "ä\x01"},
	{name: "ascii-control-only", password: "a\x01\tb\x7f"},
	{name: "ideographic-space", password: "a\u3000b"},
	{name: "hebrew-only", password: "\u05d0\u05d1"},
	{name: "hebrew-with-latin", password: "\u05d0a\u05d1"},
	{name: "digit-then-hebrew", password: "1\u05d0"},
	{name: "arabic-presentation-forms", password: "\ufe8d\ufe8f"},
	{name: "roman-numeral", password: "\u2168"},
	{name: "decomposed-umlaut", password: "pa\u0308ss"},
	{name: "hangul-jamo", password: "\u1100\u1161\u11a8"},
	{name: "assigned-after-unicode-3.2", password: "ä\u0221"},
	{name: "tag-character", password: "ä\U000e0041"},
	{name: "noncharacter", password: "ä\ufdd0"},
	{name: "variation-selector", password: "ä\ufe0f"},
	{name: "math-bold", password: "\U0001d400\U0001d401"},
	{name: "cjk-compatibility", password: "\u3300"},
	{name: "kelvin-angstrom-ohm", password: "\u212a\u212b\u2126"},
}

// runePools are the ranges random Unicode passwords are drawn from: scripts,
// compatibility characters, every SASLprep table, and code points unassigned
// in Unicode 3.2.
var runePools = [][2]rune{
	{'a', 'z'}, {'0', '9'}, {0x00a0, 0x00ff}, {0x0300, 0x036f}, {0x0370, 0x03ff}, {0x0400, 0x04ff},
	{0x05d0, 0x05ea}, {0x0621, 0x064a}, {0x0660, 0x066f}, {0x1100, 0x11ff}, {0x1800, 0x180f},
	{0x2000, 0x206f}, {0x2070, 0x209f}, {0x2100, 0x218f}, {0x2460, 0x24ff}, {0x2ff0, 0x2fff},
	{0x3000, 0x303f}, {0x3300, 0x33ff}, {0x4e00, 0x4e7f}, {0xac00, 0xac7f}, {0xe000, 0xe00f},
	{0xf900, 0xfaff}, {0xfb00, 0xfb4f}, {0xfdd0, 0xfdef}, {0xfe00, 0xfe0f}, {0xfe70, 0xfeff},
	{0xff01, 0xff5e}, {0xfff9, 0xfffd}, {0x1d400, 0x1d4ff}, {0x1f300, 0x1f64f}, {0xe0001, 0xe007f},
}

// randomUnicode returns n passwords of 1 to 8 code points, reproducible from seed.
func randomUnicode(seed uint64, n int) []credCase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]credCase, n)
	for i := range out {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			p := runePools[r.IntN(len(runePools))]
			b.WriteRune(p[0] + rune(r.IntN(int(p[1]-p[0]+1))))
		}
		out[i] = credCase{name: fmt.Sprintf("random-unicode-%d(seed %d)", i, seed), password: b.String()}
	}
	return out
}

// unicodeLiteral spells s as a PostgreSQL U& string constant, one escape per
// code point, so no byte of it depends on the client's encoding or quoting.
func unicodeLiteral(s string) string {
	var b strings.Builder
	b.WriteString("U&'")
	for _, r := range s {
		fmt.Fprintf(&b, `\+%06X`, r)
	}
	b.WriteString("'")
	return b.String()
}

// testPostgresSASLprep has the server hash plaintext passwords itself and
// requires SCRAMWithSalt, given the salt the server drew, to produce the same
// secret byte for byte; then it stores our own verifiers for the same
// passwords and requires libpq to log in with them (all fixed cases, the first
// random ones). CREDO_ENGINES_SEED reproduces a failing random case.
func testPostgresSASLprep(t *testing.T, p *postgres, cases []credCase) {
	g := NewWithT(t)
	seed := uint64(20260521)
	if s := os.Getenv("CREDO_ENGINES_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		g.Expect(err).NotTo(HaveOccurred())
		seed = v
	}
	all := append([]credCase{}, cases...)
	for _, c := range cases {
		if c.twin != "" {
			all = append(all, credCase{name: c.name + "-twin", password: c.twin})
		}
	}
	all = append(all, saslprepCases...)
	const randomCount = 300
	all = append(all, randomUnicode(seed, randomCount)...)

	start := time.Now()
	var script strings.Builder
	for i, c := range all {
		p.sec.add(c.password)
		fmt.Fprintf(&script, "CREATE ROLE d%03d LOGIN PASSWORD %s;\n", i, unicodeLiteral(c.password))
	}
	p.mustPSQL(t, "server-hashed passwords", script.String())
	got := p.rolpasswords(t, "d")
	var differ []string
	for i, c := range all {
		secret := got[fmt.Sprintf("d%03d", i)]
		p.sec.add(secret)
		salt, ok := saltOf(secret)
		if !ok || verifier.SCRAMWithSalt(c.password, salt, 4096) != secret {
			differ = append(differ, c.name)
		}
	}
	g.Expect(differ).To(BeEmpty(), "cases whose secret differs from the one PostgreSQL computed for the same password and salt")
	t.Logf("%d secrets computed by PostgreSQL reproduced byte for byte (seed %d) in %s", len(all), seed, time.Since(start).Round(time.Millisecond))
	start = time.Now()

	scram, _ := verifier.Lookup(verifier.SCRAMSHA256)
	script.Reset()
	for i, c := range all {
		v, err := scram.Verifier("", c.password)
		g.Expect(err).NotTo(HaveOccurred(), c.name)
		p.sec.add(v)
		fmt.Fprintf(&script, "ALTER ROLE d%03d PASSWORD '%s';\n", i, v)
	}
	p.mustPSQL(t, "our verifiers", script.String())
	t.Logf("%d verifiers stored in %s", len(all), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	// A libpq login costs about a tenth of a second here; the server-side
	// comparison above already covers every random case, so libpq logs in
	// with the fixed cases and the first randomLogins random ones.
	const randomLogins = 50
	n := len(all) - randomCount + randomLogins
	logins := each(n, func(i int) result { return p.login(fmt.Sprintf("d%03d", i), all[i].password) })
	var refused []string
	for i, c := range all[:n] {
		if r := logins[i]; !r.ok() {
			refused = append(refused, c.name)
			t.Logf("case %s: %s", c.name, p.sec.scrub(strings.TrimSpace(r.stderr)))
		}
	}
	g.Expect(refused).To(BeEmpty(), "cases libpq could not log in with our verifier")
	t.Logf("libpq logged in with our verifier for %d of them in %s", n, time.Since(start).Round(time.Millisecond))
}
