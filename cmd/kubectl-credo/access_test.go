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

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

func TestMintRefusesToPrintIntoAPipeWithoutAnOutputFlag(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	err := run([]string{"mint", "app", "--kubeconfig", "/nonexistent"}, strings.NewReader(""), &out)
	g.Expect(err).To(MatchError(ContainSubstring("stdout is not a terminal")))
	g.Expect(out.Len()).To(BeZero())
}

func TestMintOutputsForPipelines(t *testing.T) {
	m := &accessv1.Mint{Status: accessv1.MintStatus{Username: "app", Password: "it's-secret", SecretName: "pg.app.account", ResourceVersion: "42"}}
	cases := map[string]string{
		"env":  "CREDO_USERNAME='app'\nCREDO_PASSWORD='it'\\''s-secret'\n",
		"json": "\"password\": \"it's-secret\"",
		"yaml": "password: it's-secret\n",
	}
	for output, want := range cases {
		t.Run(output, func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			g.Expect(printMint(&out, output, m, nil)).To(Succeed())
			g.Expect(out.String()).To(ContainSubstring(want))
		})
	}
	g := NewWithT(t)
	g.Expect(printMint(&bytes.Buffer{}, "xml", m, nil)).To(MatchError(ContainSubstring("unknown output")))
}
