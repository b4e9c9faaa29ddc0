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

package chart

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DefaultNamespace is the namespace config/ installs into. Every occurrence
// of it in the chart becomes the release's namespace.
const DefaultNamespace = "credo-system"

// releaseNamespace is the template text of the release's namespace.
const releaseNamespace = "{{ .Release.Namespace }}"

// template turns objects into the text of a Helm template: an object's
// YAML with placeholders, each replaced by template text once the object
// is serialised. A placeholder is a YAML scalar (__credotplN__) that is
// either a value, replaced in place by an expression (scalar), or a whole
// line, a key or a key's value, replaced by lines of template text at the
// line's indentation (line).
type template struct {
	n      int
	scalar map[string]string
	line   map[string]lineFunc
}

// lineFunc returns the lines that replace a placeholder's line: indent is
// the line's indentation and key the key whose value the placeholder is
// ("" when the placeholder is the key).
type lineFunc func(indent, key string) string

func newTemplate() *template {
	return &template{scalar: map[string]string{}, line: map[string]lineFunc{}}
}

func (t *template) token() string {
	t.n++
	return fmt.Sprintf("__credotpl%d__", t.n)
}

// Scalar returns a placeholder that becomes expr, a template action.
func (t *template) Scalar(expr string) *yaml.RNode {
	tok := t.token()
	t.scalar[tok] = expr
	return yaml.NewScalarRNode(tok)
}

// Line returns a placeholder whose line becomes f's lines.
func (t *template) Line(f lineFunc) string {
	tok := t.token()
	t.line[tok] = f
	return tok
}

// SetLine sets field of node to a placeholder whose line, `field: <tok>`,
// becomes f's lines; the field keeps its place among its siblings.
func (t *template) SetLine(node *yaml.RNode, field string, f lineFunc) error {
	return node.PipeE(yaml.SetField(field, yaml.NewScalarRNode(t.Line(f))))
}

// AddLines adds, at the end of the mapping node, a line placeholder that
// becomes f's lines (f is called with key "").
func (t *template) AddLines(node *yaml.RNode, f lineFunc) error {
	return node.PipeE(yaml.SetField(t.Line(f), yaml.NewScalarRNode("")))
}

// linePattern matches a line placeholder's line: as a value (`key: tok`,
// `- key: tok`) or as a key (`tok: ""`).
var linePattern = regexp.MustCompile(`(?m)^( *)(- )?(?:(\S[^\n]*?): )?(__credotpl\d+__)(?::(?: "")?)?$`)

// Render serialises docs (objects edited with t's placeholders) as one
// template: text that looks like a template action is escaped, the
// default namespace becomes the release's, and the placeholders become
// their template text. wrap, when not empty, is the condition of an if
// around the whole file.
func (t *template) Render(header, wrap string, docs []*yaml.RNode) (string, error) {
	var b strings.Builder
	for i, d := range docs {
		s, err := d.String()
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(s)
	}
	text := strings.ReplaceAll(b.String(), "{{", `{{ "{{" }}`)
	text = strings.ReplaceAll(text, DefaultNamespace, releaseNamespace)
	var missing []string
	text = linePattern.ReplaceAllStringFunc(text, func(m string) string {
		sub := linePattern.FindStringSubmatch(m)
		indent, item, key, tok := sub[1], sub[2], sub[3], sub[4]
		f, ok := t.line[tok]
		if !ok {
			return m // a scalar placeholder
		}
		delete(t.line, tok)
		if item == "" {
			return strings.TrimSuffix(f(indent, key), "\n")
		}
		// The first key of a list item: its lines are the item's, the
		// first (the key's, which f must begin with) after the dash.
		inner := indent + "  "
		return indent + "- " + strings.TrimPrefix(strings.TrimSuffix(f(inner, key), "\n"), inner)
	})
	for tok, expr := range t.scalar {
		if !strings.Contains(text, tok) {
			missing = append(missing, tok)
		}
		text = strings.ReplaceAll(text, tok, expr)
	}
	for tok := range t.line {
		missing = append(missing, tok)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("placeholders not found in the serialised YAML: %v", missing)
	}
	if wrap != "" {
		text = "{{- if " + wrap + " }}\n" + text + "{{- end }}\n"
	}
	return header + text, nil
}

// toYAMLBlock renders `key:` and the YAML of expr below it.
func toYAMLBlock(expr string) lineFunc {
	return func(indent, key string) string {
		return fmt.Sprintf("%s%s:\n%s  {{- toYaml %s | nindent %d }}", indent, key, indent, expr, len(indent)+2)
	}
}

// withBlock renders `key:` and the YAML of expr below it, only when expr
// is not empty.
func withBlock(expr string) lineFunc {
	return func(indent, key string) string {
		return fmt.Sprintf("%[1]s{{- with %[2]s }}\n%[1]s%[3]s:\n%[1]s  {{- toYaml . | nindent %[4]d }}\n%[1]s{{- end }}",
			indent, expr, key, len(indent)+2)
	}
}

// raw renders lines as they are, each at the placeholder's indentation.
func raw(lines ...string) lineFunc {
	return func(indent, _ string) string {
		var b strings.Builder
		for i, l := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(indent + l)
		}
		return b.String()
	}
}
