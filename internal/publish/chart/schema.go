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
	"encoding/json"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// enums are the values that take one of a few strings.
var enums = map[string][]string{
	"apiService.certificate.source": {"generated", "cert-manager", "secret"},
	"image.pullPolicy":              {"Always", "IfNotPresent", "Never"},
}

// schema is values.schema.json: a section's keys are closed (a misspelt key
// fails the install), a value's type is its default's, a map or list value
// is open.
func schema(values *yaml.RNode) ([]byte, error) {
	var walk func(path string, n *yaml.Node) map[string]any
	walk = func(path string, n *yaml.Node) map[string]any {
		switch n.Kind {
		case yaml.MappingNode:
			if !hasComments(n) {
				return map[string]any{"type": "object"}
			}
			props := map[string]any{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				p := key
				if path != "" {
					p = path + "." + key
				}
				props[key] = walk(p, n.Content[i+1])
			}
			return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		case yaml.SequenceNode:
			return map[string]any{"type": "array"}
		}
		s := map[string]any{}
		switch n.Tag {
		case yaml.NodeTagBool:
			s["type"] = "boolean"
		case yaml.NodeTagInt:
			s["type"] = "integer"
		default:
			s["type"] = "string"
		}
		if e, ok := enums[path]; ok {
			s["enum"] = e
		}
		return s
	}
	root := walk("", values.YNode())
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["title"] = "Values of credo's chart, generated from config/ by hack/chartgen"
	raw, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(raw, '\n'), nil
}
