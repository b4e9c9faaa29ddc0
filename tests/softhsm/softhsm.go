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

// Package softhsm sets up SoftHSM2 (Debian's softhsm2 package, installed by
// hack/pkcs11/install.sh) for the tests of the PKCS#11 key store: a token
// directory and configuration of the test's own, and tokens initialized in
// it with softhsm2-util. It fails, never skips, when SoftHSM2 is missing.
package softhsm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvModule names the path of libsofthsm2.so (make test-pkcs11 sets it
// from hack/pkcs11/install.sh); the Debian paths are tried without it.
const EnvModule = "CREDO_SOFTHSM2_MODULE"

// modulePaths are where Debian installs the module.
var modulePaths = []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so"}

// errMissing says what to run.
var errMissing = errors.New("SoftHSM2 is not installed: run hack/pkcs11/install.sh (make test-pkcs11 does)")

// Module returns the path of libsofthsm2.so.
func Module() (string, error) {
	paths := modulePaths
	if m := os.Getenv(EnvModule); m != "" {
		paths = []string{m}
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no libsofthsm2.so at %v", errMissing, paths)
}

// Setup makes dir the token directory of SoftHSM2 for this process: it
// writes dir/softhsm2.conf and points SOFTHSM2_CONF at it. Call it before
// the module is loaded (the module reads its configuration once).
func Setup(dir string) error {
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		return fmt.Errorf("%w: %w", errMissing, err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return err
	}
	conf := filepath.Join(dir, "softhsm2.conf")
	body := "directories.tokendir = " + tokens + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return err
	}
	return os.Setenv("SOFTHSM2_CONF", conf)
}

// InitToken initializes a token of label in the first free slot, with
// the user PIN pin and the security officer PIN soPIN. Its errors hold
// softhsm2-util's output, which never holds the PINs.
func InitToken(label, pin, soPIN string) error {
	out, err := exec.Command("softhsm2-util", "--init-token", "--free", "--label", label,
		"--pin", pin, "--so-pin", soPIN).CombinedOutput()
	if err != nil {
		return fmt.Errorf("softhsm2-util --init-token --label %s: %w: %s", label, err, out)
	}
	return nil
}
