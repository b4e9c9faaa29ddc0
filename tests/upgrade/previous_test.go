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

package upgrade

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/credo-dev/credo/internal/publish/signing"
)

// previous is the release the upgrade starts from: the last line of
// hack/release/releases.txt, built as a release from its own tree.
type previous struct {
	// Tag and Commit name it.
	Tag, Commit string
	// Dir is the release's output directory (`make release`'s
	// dist/<VERSION>): oci/, bin/, cosign.pub, digests.txt.
	Dir string
}

// releasesFile records every release cut and the commit its tag names.
const releasesFile = "hack/release/releases.txt"

// previousRelease is the last release recorded in root's releasesFile. Tags
// are not read to find it: a clone need not carry them. Where the clone has
// the tag, it must name the recorded commit.
func previousRelease(ctx context.Context, root string) (tag, commit string, err error) {
	b, err := os.ReadFile(filepath.Join(root, releasesFile))
	if err != nil {
		return "", "", err
	}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[0], "v") || len(f[1]) != 40 {
			return "", "", fmt.Errorf("%s:%d: want \"<version> <40-digit commit>\", have %q", releasesFile, n+1, line)
		}
		tag, commit = f[0], f[1]
	}
	if tag == "" {
		return "", "", fmt.Errorf("%s records no release", releasesFile)
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "-q", "--verify",
		"refs/tags/"+tag+"^{commit}").Output(); err == nil {
		if got := strings.TrimSpace(string(out)); got != commit {
			return "", "", fmt.Errorf("%s records %s at %s, but its tag here names %s", releasesFile, tag, commit, got)
		}
	}
	return tag, commit, nil
}

// haveCommit makes sure root's repository holds commit, fetching it from
// its origin when it does not: alone in a shallow clone (which stays
// shallow), with its history in a full one (which stays full).
func haveCommit(ctx context.Context, root, commit string) error {
	if exec.CommandContext(ctx, "git", "-C", root, "cat-file", "-e", commit+"^{commit}").Run() == nil {
		return nil
	}
	args := []string{"-C", root, "fetch", "-q", "origin", commit}
	if out, _ := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--is-shallow-repository").Output(); strings.TrimSpace(string(out)) == "true" {
		args = append(args, "--depth=1")
	}
	out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("the previous release's commit %s is not in %s, and fetching it from origin failed "+
			"(fetch it, or clone with its history): %w\n%s", commit, root, err, out)
	}
	return nil
}

// cacheDir is where the previous releases and the tests' signing key are
// kept between runs: ~/.cache/credo/upgrade.
func cacheDir() (string, error) {
	home, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "credo", "upgrade"), nil
}

// signingKey is the tests' release key, made once and kept in the cache:
// both releases are signed with it, as every release is signed with the
// one key users pin (docs/development.md#the-signing-key).
func signingKey(dir string) (string, error) {
	path := filepath.Join(dir, "release.key")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	key, err := signing.GenerateKey()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// buildPrevious builds the previous release from its own tree with its own
// release builder (`go run ./hack/release build` of that tree, its go.mod
// and its toolchain line), for this machine's platform, signed with key:
// a worktree of root's repository at the release's commit. The result is
// cached under dir by the commit (signed with dir's one key), so a run after
// the first costs nothing; logf reports the cold build's duration.
func buildPrevious(ctx context.Context, root, dir, key string, logf func(string, ...any)) (*previous, error) {
	tag, commit, err := previousRelease(ctx, root)
	if err != nil {
		return nil, err
	}
	base := filepath.Join(dir, commit)
	p := &previous{Tag: tag, Commit: commit, Dir: filepath.Join(base, "release")}
	done := filepath.Join(base, "done")
	if b, err := os.ReadFile(done); err == nil && strings.TrimSpace(string(b)) == tag {
		return p, nil
	}
	start := time.Now()
	if err := os.RemoveAll(base); err != nil {
		return nil, err
	}
	src := filepath.Join(base, "src")
	run := func(dir string, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	if err := haveCommit(ctx, root, commit); err != nil {
		return nil, err
	}
	// The worktree goes once the build is done, or failed. One an
	// interrupted run left registered (its directory went with base) is
	// unregistered first. No hook of the developer's repository runs.
	removeWorktree := func() error { return run(root, "git", "worktree", "remove", "--force", src) }
	_ = removeWorktree()
	defer func() { _ = removeWorktree() }()
	if err := run(root, "git", "-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "--detach", src, commit); err != nil {
		return nil, err
	}
	if err := run(src, "go", "run", "./hack/release", "build", "--version", tag, "--out", p.Dir, "--key", key,
		"--platforms", "linux/"+runtime.GOARCH); err != nil {
		return nil, fmt.Errorf("building the previous release %s from its own tree: %w", tag, err)
	}
	if err := removeWorktree(); err != nil {
		return nil, err
	}
	logf("built the previous release %s (commit %s) from its own tree in %s", tag, commit, time.Since(start).Round(time.Second))
	return p, os.WriteFile(done, []byte(tag+"\n"), 0o644)
}

// digest is the digest digests.txt gives the reference ref
// ("ghcr.io/credo-dev/credo:v0.1.0").
func (p *previous) digest(ref string) (string, error) {
	f, err := os.Open(filepath.Join(p.Dir, "digests.txt"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		named, _, _ := strings.Cut(s.Text(), " ") // a platform's image: "<ref>@<digest> <platform>"
		if r, d, ok := strings.Cut(named, "@"); ok && r == ref {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s: no digest of %s", f.Name(), ref)
}

// binaries is the previous release's directory of binaries for this
// machine.
func (p *previous) binaries() string {
	return filepath.Join(p.Dir, "bin", runtime.GOOS+"_"+runtime.GOARCH)
}
