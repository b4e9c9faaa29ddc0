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
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/version"
)

// kubectl credo version and kubectl credo --version print the one build
// line on stdout and exit 0, with no kubeconfig; an argument is refused.
func TestVersionPrintsTheBuild(t *testing.T) {
	g := NewWithT(t)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, code := runBinary(t, args...)
		g.Expect(code).To(BeZero(), "%v: %s", args, stderr)
		g.Expect(stderr).To(BeEmpty())
		g.Expect(stdout).To(Equal(version.Get().Line("kubectl-credo")+"\n"), "%v", args)
	}
	stdout, stderr, code := runBinary(t, "version", "extra")
	g.Expect(code).To(Equal(1))
	g.Expect(stdout).To(BeEmpty())
	g.Expect(stderr).To(HavePrefix("kubectl-credo: version takes no arguments\n"))
}
