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
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/credo-dev/credo/internal/verifier"
)

// maxPassword bounds what hash reads from stdin.
const maxPassword = 4096

const hashUsage = `usage: kubectl credo hash --format <format> [--username name] < password.txt

Read one password on stdin and print the value the engine stores (the verifier); needs no cluster.`

// hash reads one password from stdin (a trailing newline is not part of it)
// and prints the stored value for the format. It never echoes the password.
func hash(args []string, stdin io.Reader, stdout io.Writer) error {
	cmd := newCommand("hash", hashUsage)
	fs := cmd.fs
	format := fs.String("format", "", "the format: one of "+strings.Join(verifier.Names(), ", "))
	username := fs.String("username", "", "the username, for formats that use it")
	if help, err := cmd.parse(args, stdout); help || err != nil {
		return err
	}
	if *format == "" {
		return fmt.Errorf("--format is required (one of %s)", strings.Join(verifier.Names(), ", "))
	}
	f, err := verifier.Lookup(*format)
	if err != nil {
		return err
	}
	line, err := bufio.NewReaderSize(io.LimitReader(stdin, maxPassword+2), maxPassword+2).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the password: %w", err)
	}
	password := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if password == "" {
		return errors.New("no password on stdin")
	}
	if len(password) > maxPassword {
		return fmt.Errorf("the password is longer than %d bytes", maxPassword)
	}
	v, err := f.Verifier(*username, password)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, v)
	return err
}
