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

package main

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestHashPrintsTheStoredValue(t *testing.T) {
	cases := []struct {
		name, format, stdin, want string
	}{
		{name: "mysql-native of a line with a newline", format: "mysql-native", stdin: "password\n",
			want: "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19\n"},
		{name: "sha256-hex without a newline", format: "sha256-hex", stdin: "password",
			want: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8\n"},
		{name: "CRLF is not part of the password", format: "sha256-hex", stdin: "password\r\n",
			want: "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			g.Expect(run([]string{"hash", "--format", tc.format}, strings.NewReader(tc.stdin), &out)).To(Succeed())
			g.Expect(out.String()).To(Equal(tc.want))
		})
	}
}

func TestHashOfScramIsAPostgresVerifier(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(run([]string{"hash", "--format", "scram-sha-256"}, strings.NewReader("s3cret\n"), &out)).To(Succeed())
	g.Expect(out.String()).To(HavePrefix("SCRAM-SHA-256$4096:"))
	g.Expect(out.String()).NotTo(ContainSubstring("s3cret"))
}

func TestHashRefusesBadInputClearly(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	err := run([]string{"hash", "--format", "md5"}, strings.NewReader("hunter2\n"), &out)
	g.Expect(err).To(MatchError(ContainSubstring("md5")))
	g.Expect(err.Error()).NotTo(ContainSubstring("hunter2"))
	g.Expect(run([]string{"hash"}, strings.NewReader("x"), &out)).To(MatchError(ContainSubstring("--format is required")))
	g.Expect(run([]string{"hash", "--format", "plaintext"}, strings.NewReader(""), &out)).To(MatchError("no password on stdin"))
	g.Expect(out.String()).To(BeEmpty())
}
