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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// isTerminal tells whether stdout is a terminal; a variable for tests.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// bindOutput binds -o of a verb that prints a secret (a password, a
// token) once, and refuses, before the verb contacts the cluster, a stdout
// that is not a terminal without it: a secret goes into a pipe or a file
// only on purpose.
func bindOutput(cmd *command, stdout io.Writer, secret string) *string {
	output := cmd.fs.StringP("output", "o", "", "json, yaml or env; required when stdout is not a terminal")
	cmd.check(func() error {
		if *output == "" && !isTerminal(stdout) {
			return fmt.Errorf("stdout is not a terminal: pass -o json, yaml or env to print the %s into a pipe or a file on purpose", secret)
		}
		return nil
	})
	return output
}

// printOnce prints the status of what a verb made once in the output
// asked for: human without -o, the status as json or yaml, or env, lines
// of shell variables.
func printOnce(w io.Writer, output string, status any, human, env string) error {
	switch output {
	case "":
		_, err := io.WriteString(w, human)
		return err
	case "json":
		b, err := json.MarshalIndent(status, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(status)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "env":
		_, err := io.WriteString(w, env)
		return err
	default:
		return fmt.Errorf("unknown output %q: json, yaml or env", output)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
