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
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestNamesAreSortedAndLookupable(t *testing.T) {
	g := NewWithT(t)
	names := Names()
	g.Expect(names).To(Equal([]string{MySQLNative, Plain, SCRAMSHA256, SHA256Hex}))
	g.Expect(slices.IsSorted(names)).To(BeTrue())
	for _, n := range names {
		f, err := Lookup(n)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(f.Name()).To(Equal(n))
		g.Expect(f.Plaintext()).To(Equal(n == Plain), n)
	}
}

func TestLookupRefusesUnknownNames(t *testing.T) {
	for _, name := range []string{"", "SCRAM-SHA-256", "scram-sha-1", "md5", "plain", " plaintext"} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			g := NewWithT(t)
			f, err := Lookup(name)
			g.Expect(f).To(BeNil())
			g.Expect(err).To(MatchError(ErrUnknownFormat))
			g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("%q", name)))
			g.Expect(err.Error()).To(ContainSubstring(SCRAMSHA256))
		})
	}
}

func TestMySQLNative(t *testing.T) {
	f, err := Lookup(MySQLNative)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, v := range []struct{ name, password, want string }{
		// PASSWORD('password') in MySQL and MariaDB.
		{"ascii", "password", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"},
		// MariaDB 10.11.19 (Debian 10.11.19-0+deb12u1), client
		// --default-character-set=utf8mb4: SELECT PASSWORD('pässwörd'),
		// PASSWORD('密码'), PASSWORD(X'6b6579f09f9491'). The hash is over the
		// UTF-8 bytes.
		{"latin", "pässwörd", "*0225EC5004ABB0B8CB557541FE53DE1A5D8CC825"},
		{"cjk", "密码", "*E04600BB4BC876C4A82BB0860EDE6F7829AE5D2A"},
		{"emoji", "key\U0001f511", "*DCDC8E1DC4C4885DE3F7892D97F925396BC8B1E0"},
	} {
		t.Run(v.name, func(t *testing.T) {
			got, err := f.Verifier("u", v.password)
			g := NewWithT(t)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(v.want))
		})
	}
}

func TestMySQLNativeShape(t *testing.T) {
	g := NewWithT(t)
	f, _ := Lookup(MySQLNative)
	for _, p := range []string{"x", "pässwörd", "密码", strings.Repeat("long", 100)} {
		got, err := f.Verifier("u", p)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(MatchRegexp(`^\*[0-9A-F]{40}$`))
	}
}

func TestSHA256Hex(t *testing.T) {
	f, err := Lookup(SHA256Hex)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, v := range []struct{ name, password, want string }{
		{"ascii", "password", "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
		// printf '%s' 'pässwörd' | sha256sum (coreutils), and likewise for 密码.
		{"latin", "pässwörd", "46970bef70aced8123f0d5d094717e2a5cd412041e03b26376049fe65b2834a4"},
		{"cjk", "密码", "a621ab606db2a11f63edc576a729843b8269250dc324206871d90635ac5e531c"},
	} {
		t.Run(v.name, func(t *testing.T) {
			got, err := f.Verifier("u", v.password)
			g := NewWithT(t)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(v.want))
		})
	}
}

func TestPlaintext(t *testing.T) {
	g := NewWithT(t)
	f, err := Lookup(Plain)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := f.Verifier("u", "pässwörd 'x'")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal("pässwörd 'x'"))
}

func TestVerifierIgnoresUsername(t *testing.T) {
	for _, n := range []string{MySQLNative, SHA256Hex, Plain} {
		g := NewWithT(t)
		f, _ := Lookup(n)
		a, err := f.Verifier("alice", "secret")
		g.Expect(err).NotTo(HaveOccurred())
		b, err := f.Verifier("bob", "secret")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(a).To(Equal(b), n)
	}
}

// Errors must be safe to put in a log, an event or a status condition: they
// never carry the password, whatever the format and whatever went wrong.
func TestErrorsNeverContainThePassword(t *testing.T) {
	const secret = "hunter2-Sécret-密码"
	for _, n := range Names() {
		t.Run(n, func(t *testing.T) {
			g := NewWithT(t)
			f, _ := Lookup(n)
			for _, bad := range []string{"", secret + "\x00" + secret, "\x00"} {
				_, err := f.Verifier(secret, bad)
				g.Expect(err).To(HaveOccurred())
				g.Expect(errors.Is(err, ErrUnusablePassword)).To(BeTrue())
				g.Expect(err.Error()).NotTo(ContainSubstring(secret))
				g.Expect(err.Error()).NotTo(ContainSubstring("hunter2"))
				g.Expect(err.Error()).To(ContainSubstring(n))
			}
		})
	}
}

func BenchmarkVerifier(b *testing.B) {
	const password = "Xk3-rT9pQw7zLm2nB8vC4yH6jD1sF5gA" // 32 characters, like a mint.
	for _, n := range Names() {
		f, err := Lookup(n)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(n, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Verifier("u", password); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
