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

// Package binaries runs the binaries `make build` puts in bin/, the ones
// the image ships, and checks what each says about itself.
package binaries

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/tests/controlplane"
)

// binaries maps each binary of cmd/ to the one name its --version prints.
var binaries = map[string]string{
	"trust-controller":      fieldowner.TrustController,
	"credential-controller": fieldowner.CredentialController,
	"enrollment-controller": fieldowner.EnrollmentController,
	"credo-agent":           "credo-agent",
	"kubectl-credo":         fieldowner.Plugin,
}

// versionLine is internal/version's Line: the name, the release, the full
// commit (-dirty) or unknown, the Go release.
var versionLine = regexp.MustCompile(`^(\S+) (\S+) \(commit ([0-9a-f]{40}(?:-dirty)?|unknown), (go1\.\S+)\)\n$`)

func TestEveryBinaryCoversCmd(t *testing.T) {
	g := NewWithT(t)
	entries, err := os.ReadDir(filepath.Join(controlplane.RepoRoot(), "cmd"))
	g.Expect(err).NotTo(HaveOccurred())
	var cmds []string
	for _, e := range entries {
		if e.IsDir() {
			cmds = append(cmds, e.Name())
		}
	}
	g.Expect(binaries).To(HaveLen(len(cmds)))
	for _, c := range cmds {
		g.Expect(binaries).To(HaveKey(c), "cmd/%s has no --version check", c)
	}
}

// Every built binary's --version prints one line on stdout, names itself,
// the release make build stamped, a full commit or unknown and the Go
// release, and exits 0 with no kubeconfig and no other flag. All of them
// say the same build.
func TestEveryBinaryPrintsItsVersion(t *testing.T) {
	g := NewWithT(t)
	builds := map[string]bool{}
	for bin, name := range binaries {
		path := filepath.Join(controlplane.RepoRoot(), "bin", bin)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s is not built (make build): %v", path, err)
		}
		cmd := exec.Command(path, "--version")
		// Nothing to reach: --version is answered before any kubeconfig is read.
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		g.Expect(cmd.Run()).To(Succeed(), "%s --version; stderr: %s", bin, stderr.String())
		g.Expect(stderr.String()).To(BeEmpty(), bin)

		m := versionLine.FindStringSubmatch(stdout.String())
		g.Expect(m).NotTo(BeNil(), "%s --version printed %q", bin, stdout.String())
		g.Expect(m[1]).To(Equal(name))
		g.Expect(m[2]).NotTo(Equal("devel"), "%s: make build stamps the release", bin)
		builds[m[2]+" "+m[3]+" "+m[4]] = true
	}
	g.Expect(builds).To(HaveLen(1), "one build of every binary: %v", builds)
}
