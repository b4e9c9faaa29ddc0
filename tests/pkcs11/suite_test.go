//go:build pkcs11

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

// Package pkcs11 proves the embedded CA with its key in a PKCS#11 token,
// SoftHSM2 from Debian's packages, on the real control plane: the
// enrollment-controller built from its flags as cmd/enrollment-controller
// builds it signs enrollments, rotates and publishes its anchor, which the
// trust-controller of the suite projects; and no Secret, log, event or
// status holds the key or the PIN. Built with the pkcs11 tag and cgo:
// make test-pkcs11.
package pkcs11

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/softhsm"
	"github.com/credo-dev/credo/tests/testenv"
)

const (
	tokenLabel = "credo-enrollment"
	// testPIN is the token's user PIN: nothing may ever show it.
	testPIN   = "pin-3c1f07be92"
	testSOPIN = "so-pin-a41d"
)

var (
	// env is the control plane, with the trust-controller running
	// in-process as cmd/trust-controller builds it.
	env *testenv.Env
	// module is libsofthsm2.so; pinFile holds testPIN.
	module, pinFile string
)

func TestMain(m *testing.M) {
	dir, err := setUp()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	code := testenv.Main(m, testenv.Options{ControllerName: trust.ControllerName, ConfigureCache: trust.ConfigureCache},
		func(ctx context.Context, e *testenv.Env) error {
			env = e
			var opts trust.Options
			fs := pflag.NewFlagSet("trust-controller", pflag.ContinueOnError)
			opts.BindFlags(fs)
			if err := fs.Parse(nil); err != nil {
				return err
			}
			return trust.Setup(ctx, e.Setup, opts)
		})
	// Nothing any component logged holds the PIN or key material.
	if env != nil {
		if out := env.Logs.String(); strings.Contains(out, testPIN) || strings.Contains(out, "PRIVATE KEY") {
			fmt.Fprintln(os.Stderr, "FAIL: a log line holds the PIN or key material")
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// setUp initializes SoftHSM2 in a directory of its own, with one token,
// and writes the PIN file.
func setUp() (string, error) {
	var err error
	if module, err = softhsm.Module(); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "credo-softhsm-")
	if err != nil {
		return "", err
	}
	if err := softhsm.Setup(dir); err != nil {
		return dir, err
	}
	if err := softhsm.InitToken(tokenLabel, testPIN, testSOPIN); err != nil {
		return dir, err
	}
	pinFile = dir + "/pin"
	return dir, os.WriteFile(pinFile, []byte(testPIN+"\n"), 0o600)
}
