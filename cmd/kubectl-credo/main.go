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

// Command kubectl-credo is credo's kubectl plugin.
//
//	kubectl credo hash --format scram-sha-256 < password.txt
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/credo-dev/credo/internal/migrate"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-credo:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is the exit status err ends the command with: 2
// (migrate.ExitSkipped) when migrate left releases skipped, 1 otherwise.
func exitCode(err error) int {
	var skipped *migrate.SkippedError
	if errors.As(err, &skipped) {
		return skipped.ExitCode()
	}
	return 1
}

const usage = `kubectl credo: credo's kubectl plugin

Commands:
  mint <account>           mint a new password and print it once (-o json|yaml|env for pipelines)
  revoke <account>         replace the password by the verifier of a value nobody keeps
  get                      summarise a namespace: trust anchors, accounts, workloads, usable join tokens
  get <account>            show one account: origin, Secret version, last operation
  ca <release>             print the CA certificates of a release from its TrustAnchor (> ca.crt)
  hash --format <format>   read a password on stdin, print the value the engine stores
  token create <policy>    mint a join token of an EnrollmentPolicy and print it once
  token revoke <id>        revoke a join token: it enrolls nothing further
  token list               list the join tokens of a namespace with their uses
  workload deny <uuid> --reason <text>
                           deny an enrolled workload: its next renewal is refused (its
                           current certificate stays valid until its notAfter)
  workload undeny <uuid>   lift a workload's denial: it renews again, within its grace
  workload label <uuid> key=value... key-...
                           relabel an enrolled workload without re-enrollment (the verb
                           relabel); its agent gets the labels with its next certificate
  migrate [-n ns | -A]     adopt chart-rendered <release>-credentials: carry tenant passwords over
                           as verifiers (Migrated, previously exposed), rotate exposed platform
                           ones; a dry run unless --apply; exit status 2 while releases are skipped
  version                  print the plugin's version, commit and Go version (also --version)

Every command but hash and version uses your kubeconfig (--kubeconfig, --context, -n, ... as kubectl).
kubectl credo <command> --help shows a command's own flags, then the kubeconfig ones.
mint and revoke expect the account Secret's version they read from the account view first, and
fail with 409 if someone minted or revoked in between; --resource-version <v> expects <v>,
--force expects nothing.
`

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("no command\n%s", usage)
	}
	switch args[0] {
	case "hash":
		return hash(args[1:], stdin, stdout)
	case "mint":
		return mint(args[1:], stdout)
	case "revoke":
		return revoke(args[1:], stdout)
	case "get":
		return get(args[1:], stdout)
	case "token":
		return token(args[1:], stdout)
	case "ca":
		return ca(args[1:], stdout)
	case "workload":
		return workloadCmd(args[1:], stdout)
	case "migrate":
		if help, err := migrateHelp(args[1:], stdout); help || err != nil {
			return err
		}
		return migrate.Command(args[1:], stdout)
	case "version", "--version":
		return printBuild(args[1:], stdout)
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}

const migrateUsage = `usage: kubectl credo migrate [-n namespace | -A] [--release name] [--apply]

Adopt chart-rendered <release>-credentials: carry tenant passwords over as verifiers (Migrated,
previously exposed), rotate exposed platform ones. A dry run unless --apply; exit status 2 while
releases are skipped.`

// migrateHelp answers migrate's -h and --help, and refuses its unknown
// flags, with the flags migrate.Command binds: true when it printed the
// help.
func migrateHelp(args []string, stdout io.Writer) (bool, error) {
	cmd := newCommand("migrate", migrateUsage)
	var f migrate.Flags
	f.BindFlags(cmd.fs)
	cmd.cluster()
	return cmd.parse(args, stdout)
}
