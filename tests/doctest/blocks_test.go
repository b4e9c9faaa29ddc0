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

package doctest

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestParse(t *testing.T) {
	doc := "# Title\n" +
		"<!-- credo:run -->\n" + // 2
		"```sh\n" + // 3
		"kubectl get credo -A\n" +
		"```\n" +
		"```yaml\n" + // 6: not a shell block, needs no marker
		"kind: X\n" +
		"```\n" +
		"<!-- credo:run hide-output tty timeout=2m -->\n" +
		"```console\n" + // 10
		"$ kubectl credo token create p \\\n" +
		"    -n ns\n" +
		"token: abc\n" +
		"$ kubectl credo token list -n ns\n" +
		"ID  POLICY\n" +
		"```\n" +
		"<!-- credo:needs-cluster (cert-manager) -->\n" +
		"```bash\n" + // 18
		"cmctl status\n" +
		"```\n" +
		"<!-- credo:run exit=2 -->\n" +
		"```sh\n" + // 22
		"kubectl credo migrate -A\n" +
		"```\n"
	g := NewWithT(t)
	blocks, err := Parse(strings.NewReader(doc))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(blocks).To(Equal([]Block{
		{Line: 3, Lang: "sh", Marker: Run, Timeout: DefaultTimeout, Script: "kubectl get credo -A\n"},
		{Line: 10, Lang: "console", Marker: Run, HideOutput: true, TTY: true, Timeout: 2 * time.Minute,
			Script: "kubectl credo token create p \\\n    -n ns\nkubectl credo token list -n ns\n"},
		{Line: 18, Lang: "bash", Marker: NeedsCluster, Timeout: DefaultTimeout, Script: "cmctl status\n"},
		{Line: 22, Lang: "sh", Marker: Run, Timeout: DefaultTimeout, Exit: 2, Script: "kubectl credo migrate -A\n"},
	}))
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"an unmarked shell block":             "text\n```sh\nls\n```\n",
		"a marker two lines before":           "<!-- credo:run -->\n\n```sh\nls\n```\n",
		"an unknown marker":                   "<!-- credo:maybe -->\n```sh\nls\n```\n",
		"an unknown option":                   "<!-- credo:run quietly -->\n```sh\nls\n```\n",
		"a timeout that is not a duration":    "<!-- credo:run timeout=soon -->\n```sh\nls\n```\n",
		"an exit status that is not one":      "<!-- credo:run exit=256 -->\n```sh\nls\n```\n",
		"a marker before a yaml block":        "<!-- credo:run -->\n```yaml\na: b\n```\n",
		"a block that is never closed":        "<!-- credo:run -->\n```sh\nls\n",
		"a marker not closed on its own line": "<!-- credo:run\n```sh\nls\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(doc))
			NewWithT(t).Expect(err).To(HaveOccurred())
		})
	}
}

// TestDocsAreMarked: every shell block of the README and the guides says
// whether the docs test runs it, without starting anything.
func TestDocsAreMarked(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := Files(root)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(files).To(ContainElements("README.md", filepath.Join("docs", "guides", "enrollment.md"), filepath.Join("docs", "security.md")))
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			_, err := ParseFile(root, f)
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
		})
	}
}

// TestTheReadmeRunsInAPipe: no block of the README needs a terminal, so
// that it runs as written from a script or an editor's pane (the docs
// test runs it with its output a pipe).
func TestTheReadmeRunsInAPipe(t *testing.T) {
	g := NewWithT(t)
	blocks, err := ParseFile(filepath.Join("..", ".."), "README.md")
	g.Expect(err).NotTo(HaveOccurred())
	for _, b := range blocks {
		g.Expect(b.TTY).To(BeFalse(), "README.md:%d is marked tty", b.Line)
	}
}
