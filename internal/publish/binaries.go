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

package publish

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The variables the linker sets to the release's version and commit
// (internal/version).
const (
	VersionVariable = "github.com/credo-dev/credo/internal/version.version"
	CommitVariable  = "github.com/credo-dev/credo/internal/version.commit"
)

// buildBinaries builds every command of root's ./cmd/... for platform
// ("linux/arm64") into dir, as the image ships them: static (no cgo), paths
// trimmed, no symbol table, the version and commit set by the linker (not
// stamped by the go command, which records the checkout's state and time
// and fails in a linked work tree), and the architecture's baseline level
// (not this machine's GOAMD64 or GOARM64) so that every machine builds the
// same bytes.
func buildBinaries(ctx context.Context, root, platform, version, commit, dir string) error {
	osName, arch, ok := strings.Cut(platform, "/")
	if !ok {
		return fmt.Errorf("platform %q is not os/arch", platform)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X "+VersionVariable+"="+version+" -X "+CommitVariable+"="+commit,
		"-o", dir+string(filepath.Separator), "./cmd/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+osName, "GOARCH="+arch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", platform, err, out)
	}
	return nil
}
