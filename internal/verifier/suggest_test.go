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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestSuggestNamesTheNearestBuiltInFormat(t *testing.T) {
	cases := map[string]struct{ name, want string }{
		"the engine's name of mysql-native":   {"mysql_native_password", MySQLNative},
		"underscores for hyphens":             {"scram_sha_256", SCRAMSHA256},
		"upper case":                          {"SCRAM-SHA-256", SCRAMSHA256},
		"a missing separator":                 {"scram-sha256", SCRAMSHA256},
		"ClickHouse's name of sha256-hex":     {"password_sha256_hex", SHA256Hex},
		"a typo":                              {"mysql-natve", MySQLNative},
		"a short name of plaintext":           {"plain", Plain},
		"a format credo does not build (md5)": {"md5", ""},
		"another SCRAM":                       {"scram-sha-1", ""},
		"an empty name":                       {"", ""},
		"only separators":                     {"--", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Suggest(tc.name)).To(Equal(tc.want))
		})
	}
}

func TestLookupNamesTheSuggestionAndTheFormatsOnce(t *testing.T) {
	g := NewWithT(t)
	_, err := Lookup("mysql_native_password")
	g.Expect(err).To(MatchError(ErrUnknownFormat))
	var unknown *UnknownFormatError
	g.Expect(errors.As(err, &unknown)).To(BeTrue())
	g.Expect(unknown.Suggestion).To(Equal(MySQLNative))
	g.Expect(err.Error()).To(Equal(`unknown format "mysql_native_password" (did you mean "mysql-native"?); ` +
		`the built-in formats are mysql-native, plaintext, scram-sha-256, sha256-hex`))

	_, err = Lookup("md5")
	g.Expect(err.Error()).To(Equal(`unknown format "md5"; the built-in formats are mysql-native, plaintext, scram-sha-256, sha256-hex`))
	for _, n := range Names() {
		g.Expect(strings.Count(err.Error(), n)).To(Equal(1), n)
	}
}
