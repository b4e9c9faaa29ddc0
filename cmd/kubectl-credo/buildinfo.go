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
	"fmt"
	"io"

	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/version"
)

const buildUsage = `usage: kubectl credo version

Print the plugin's version, the commit it was built from and the Go that built it, on one line.
kubectl credo --version prints the same.`

// printBuild prints the plugin's build (internal/version), named by its one
// name; it talks to no cluster. Not to be confused with versionFlags, the
// account Secret's resourceVersion a mint or revocation expects.
//
//	kubectl credo version
func printBuild(args []string, stdout io.Writer) error {
	cmd := newCommand("version", buildUsage)
	if help, err := cmd.parse(args, stdout); help || err != nil {
		return err
	}
	if cmd.fs.NArg() != 0 {
		return fmt.Errorf("version takes no arguments\n%s", buildUsage)
	}
	return version.Print(stdout, fieldowner.Plugin)
}
