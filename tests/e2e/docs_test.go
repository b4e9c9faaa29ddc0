//go:build e2e

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

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
	"github.com/credo-dev/credo/tests/doctest"
)

// TestDocs runs every block of README.md and docs/guides/*.md marked
// <!-- credo:run --> (tests/doctest), file by file in document order, on an
// environment of its own started as `make dev` starts it (every Flux
// controller, config/samples applied): the blocks mint, create tokens and
// apply objects, which the other tests must not see. Each block runs in a
// fresh `bash -euo pipefail` with its output a pipe, as from a script or an
// editor's pane (a block marked tty under a pseudo-terminal, as typed at a
// terminal: kubectl credo prints a password or a token without -o to a
// terminal only), in a directory that looks like the repository to it (config/ and the rest
// linked, bin/ holding kubectl, flux, kubectl-credo and bin/dev/kubeconfig),
// with KUBECONFIG and PATH set as the README says. A file stops at its first
// failing block, whose file, line and output (unless marked hide-output) the
// failure names.
func TestDocs(t *testing.T) {
	needLocal(t)
	root := controlplane.RepoRoot()
	files, err := doctest.Files(root)
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string][]doctest.Block{}
	for _, f := range files {
		blocks, err := doctest.ParseFile(root, f)
		if err != nil {
			t.Fatal(err)
		}
		plans[f] = blocks
	}
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("the docs test runs tty blocks under script(1) from util-linux, which is not on PATH")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env, err := devenv.Start(ctx, devenv.Options{Dir: t.TempDir(), Flux: controlplane.FluxControllers})
	if err != nil {
		t.Fatalf("starting the development environment: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the development environment: %v", err)
		}
	}()

	// A reader starts a few seconds after make dev's welcome, once the
	// samples settled: their accounts and the enrollment CA's anchor.
	// The samples' accounts, less those not Ready on purpose.
	names, err := env.Kubectl(ctx, "get", "credentialaccounts", "-n", devenv.DemoNamespace, "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get credentialaccounts: %v\n%s", err, names)
	}
	accounts := []string{"wait", "-n", devenv.DemoNamespace, "--for=condition=ready", "--timeout=2m"}
	for _, n := range strings.Fields(string(names)) {
		onPurpose := slices.ContainsFunc(devenv.FailingOnPurpose, func(o devenv.OnPurpose) bool {
			return o.Resource == "credentialaccount" && o.Namespace == devenv.DemoNamespace && strings.HasSuffix(n, "/"+o.Name)
		})
		if !onPurpose {
			accounts = append(accounts, n)
		}
	}
	for _, args := range [][]string{
		accounts,
		{"wait", "trustanchor/" + devenv.InstallRelease, "-n", devenv.PlatformNamespace, "--for=condition=ready", "--timeout=2m"},
	} {
		if out, err := env.Kubectl(ctx, args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	t.Run("make dev's welcome names every sample that is not Ready", func(t *testing.T) {
		notReadyOnlyOnPurpose(ctx, t, env)
	})

	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			dir := docsWorkdir(t, root, env)
			for _, b := range plans[f] {
				if b.Marker != doctest.Run {
					continue
				}
				if out, err := runBlock(ctx, dir, b); err != nil {
					if b.HideOutput {
						out = "(not shown: the block is marked hide-output, it prints a password or a token)"
					}
					t.Fatalf("%s:%d: %v\n%s", f, b.Line, err, out)
				}
			}
		})
	}
}

// docsWorkdir is a directory that looks like the repository to a block:
// every top-level entry of root linked, but bin/ holds links to root/bin's
// binaries, kubectl and flux from their caches, and bin/dev/kubeconfig is
// env's, so that `export KUBECONFIG=bin/dev/kubeconfig` and files a block
// writes stay out of the clone.
func docsWorkdir(t *testing.T, root string, env *devenv.Environment) string {
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "bin" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(filepath.Join(bin, "dev"), 0o700); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		filepath.Join(bin, "dev", "kubeconfig"): env.Kubeconfig,
		filepath.Join(bin, "kubectl"):           env.KubectlPath,
	}
	flux, err := controlplane.FluxAssetsDir("flux")
	if err != nil {
		t.Fatal(err)
	}
	links[filepath.Join(bin, "flux")] = filepath.Join(flux, "flux")
	for _, name := range []string{"kubectl-credo", "credo-agent"} {
		links[filepath.Join(bin, name)] = filepath.Join(root, "bin", name)
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runBlock runs one block in dir and returns its output (terminal line
// endings undone). Its output is a pipe, or a pseudo-terminal (script(1))
// for a tty block. The block's process group is killed at its timeout.
func runBlock(ctx context.Context, dir string, b doctest.Block) (string, error) {
	script := filepath.Join(dir, fmt.Sprintf(".block-%d.sh", b.Line))
	if err := os.WriteFile(script, []byte(b.Script), 0o600); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", script)
	if b.TTY {
		cmd = exec.CommandContext(ctx, "script", "--quiet", "--return", "--flush",
			"--command", "bash -euo pipefail "+script, "/dev/null")
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+filepath.Join(dir, "bin", "dev", "kubeconfig"),
		"PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TERM=dumb", "NO_COLOR=1",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	text := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return text, fmt.Errorf("timed out after %s", b.Timeout)
	}
	status := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		status = exit.ExitCode()
	} else if err != nil {
		return text, err
	}
	if status != b.Exit {
		return text, fmt.Errorf("exited with %d after %s, want %d", status, time.Since(start).Round(100*time.Millisecond), b.Exit)
	}
	return text, nil
}

// notReadyOnlyOnPurpose waits until the demo settled as make dev's
// welcome says it does: every credo object of config/samples Ready but
// those devenv.FailingOnPurpose lists, each not Ready with its reason.
func notReadyOnlyOnPurpose(ctx context.Context, t *testing.T, env *devenv.Environment) {
	want := map[string]string{}
	for _, o := range devenv.FailingOnPurpose {
		want[o.Resource+" "+o.Namespace+"/"+o.Name] = "False " + o.Reason
	}
	const ready = `{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}`
	notReady := func() (map[string]string, error) {
		out, err := env.Kubectl(ctx, "get", "credo-all", "-A", "-o",
			`jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name} `+ready+`{"\n"}{end}`)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			status := strings.Join(f[2:], " ")
			if !strings.HasPrefix(status, "True") {
				got[strings.ToLower(f[0])+" "+f[1]] = status
			}
		}
		return got, nil
	}
	NewWithT(t).Eventually(notReady).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(2*time.Second).
		Should(Equal(want), "the samples not Ready are those the welcome lists, for the reasons it gives")
}
