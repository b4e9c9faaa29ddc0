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
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// runBinary runs kubectl-credo (this test binary, as main) with args and
// returns its stdout, stderr and exit status.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running kubectl-credo %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), 0
}

// Every verb's -h and --help exit 0 and print, on stdout, the verb's usage,
// its own flags, then the kubeconfig flags under "Global flags:".
func TestEveryVerbsHelpExitsZeroWithItsOwnFlagsFirst(t *testing.T) {
	cases := []struct {
		verb []string
		// own is one of the verb's own flags; "" for a verb with none.
		own string
		// global tells whether the verb takes the kubeconfig flags.
		global bool
	}{
		{[]string{"mint"}, "--output", true},
		{[]string{"revoke"}, "--force", true},
		{[]string{"get"}, "", true},
		{[]string{"ca"}, "", true},
		{[]string{"hash"}, "--format", false},
		{[]string{"token", "create"}, "--lifetime", true},
		{[]string{"token", "revoke"}, "", true},
		{[]string{"token", "list"}, "--policy", true},
		{[]string{"migrate"}, "--apply", true},
		{[]string{"workload", "deny"}, "--reason", true},
		{[]string{"workload", "undeny"}, "--all-namespaces", true},
		{[]string{"workload", "label"}, "--hostname", true},
		{[]string{"version"}, "", false},
	}
	for _, tc := range cases {
		for _, help := range []string{"--help", "-h"} {
			name := strings.Join(tc.verb, " ") + " " + help
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				// An argument and a flag before the help change nothing.
				args := append(append([]string{}, tc.verb...), "some-name", help)
				if tc.global {
					args = append(args[:len(args)-1], "--kubeconfig", "/nonexistent", help)
				}
				stdout, stderr, code := runBinary(t, args...)
				g.Expect(code).To(BeZero(), "exit status; stderr: %s", stderr)
				g.Expect(stderr).To(BeEmpty())
				g.Expect(stdout).To(HavePrefix("usage: kubectl credo " + strings.Join(tc.verb, " ")))
				flags, globals := strings.Index(stdout, "\nFlags:\n"), strings.Index(stdout, "\nGlobal flags:\n")
				// Where a flag's line is, not where the usage names it.
				line := func(flag string) int {
					loc := regexp.MustCompile(`(?m)^\s+(-\w, )?` + flag + `\b`).FindStringIndex(stdout)
					if loc == nil {
						return -1
					}
					return loc[0]
				}
				if tc.own != "" {
					g.Expect(flags).To(BeNumerically(">", 0), "the verb's own flags are listed")
					g.Expect(line(tc.own)).To(BeNumerically(">", flags))
				} else {
					g.Expect(flags).To(Equal(-1), "no empty Flags section")
				}
				if !tc.global {
					g.Expect(globals).To(Equal(-1))
					g.Expect(stdout).NotTo(ContainSubstring("--kubeconfig"))
					return
				}
				g.Expect(globals).To(BeNumerically(">", flags), "the global flags come last")
				if tc.own != "" {
					g.Expect(line(tc.own)).To(BeNumerically("<", globals))
				}
				g.Expect(line("--kubeconfig")).To(BeNumerically(">", globals))
				g.Expect(line("--namespace")).To(BeNumerically(">", globals))
			})
		}
	}
}

// kubectl credo --help, kubectl credo token --help and kubectl credo
// workload --help list the commands and exit 0; an unknown flag exits 1 and points at --help.
func TestCommandListsHelpAndUnknownFlags(t *testing.T) {
	g := NewWithT(t)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"token", "--help"}, {"token", "-h"}} {
		stdout, stderr, code := runBinary(t, args...)
		g.Expect(code).To(BeZero(), "%v: %s", args, stderr)
		g.Expect(stdout).To(ContainSubstring("token create <policy>"), "%v", args)
	}
	for _, args := range [][]string{{"--help"}, {"workload", "--help"}} {
		stdout, stderr, code := runBinary(t, args...)
		g.Expect(code).To(BeZero(), "%v: %s", args, stderr)
		g.Expect(stdout).To(ContainSubstring("workload deny <uuid> --reason"), "%v", args)
		g.Expect(stdout).To(ContainSubstring("workload undeny <uuid>"), "%v", args)
	}
	stdout, stderr, code := runBinary(t, "mint", "db", "--no-such-flag")
	g.Expect(code).To(Equal(1))
	g.Expect(stdout).To(BeEmpty())
	g.Expect(stderr).To(Equal("kubectl-credo: unknown flag: --no-such-flag (kubectl credo mint --help lists the flags)\n"),
		"one line, no flag dump")
}
