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

// Command golangci-lint-kube-api-linter is golangci-lint with kube-api-linter compiled in as a
// module plugin: what `golangci-lint custom` would build from a .custom-gcl.yml, built from the
// Go module proxy alone. `golangci-lint custom` clones golangci-lint's source with git from its
// forge, which a machine that reaches only the module proxy cannot do; this module pins the same
// two modules in go.mod and go.sum instead. `make lint` builds it into bin/ and runs it over api/
// with .golangci-kal.yml.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	// The module plugin: registers the "kubeapilinter" custom linter.
	_ "sigs.k8s.io/kube-api-linter"
)

func main() {
	info := commands.BuildInfo{Version: "unknown", Commit: "?", Date: "(unknown)", GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		var gcl, kal string
		for _, dep := range bi.Deps {
			switch dep.Path {
			case "github.com/golangci/golangci-lint/v2":
				gcl = strings.TrimPrefix(dep.Version, "v")
			case "sigs.k8s.io/kube-api-linter":
				kal = dep.Version
			}
		}
		info.Version = fmt.Sprintf("%s, kube-api-linter %s", gcl, kal)
	}

	if err := commands.Execute(info); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "The command is terminated due to an error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}
