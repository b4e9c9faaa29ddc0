//go:build engines

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

// Package engines proves credo's verifier formats (internal/verifier) against
// the real engines: PostgreSQL 15, MariaDB and ClickHouse, installed from
// Debian's packages by hack/engines/install.sh and run with `make
// test-engines`.
//
// Each test starts its engine itself, on 127.0.0.1, a free port and a
// temporary directory, stores the verifier computed by our code for a set of
// passwords (ASCII, spaces, quotes and backslashes, Unicode that SASLprep
// rewrites or refuses, long ones, random ones), and logs in with the engine's
// own client: the right password must get in, a wrong one must not.
//
// Passwords and verifiers never appear in the output: failures name the case,
// and any client output shown is scrubbed of them first.
package engines

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// credCase is one password every engine is tried with.
type credCase struct {
	name     string
	password string
	// twin, when set, is a different string that PostgreSQL's SASLprep turns
	// into the same password: it logs in to PostgreSQL, and must not log in
	// to the engines that compare bytes (MariaDB, ClickHouse).
	twin string
}

// credCases returns the fixed cases and five random 32-character passwords
// drawn from a CSPRNG over printable ASCII (quotes and backslash included).
func credCases(t *testing.T) []credCase {
	t.Helper()
	cases := []credCase{
		{name: "ascii", password: "Tr0ub4dor&3"},
		{name: "spaces", password: "correct horse battery staple"},
		{name: "edge-spaces", password: "  padded both ends  "},
		{name: "quotes-backslash", password: `it's "quoted" \ and \\ back\slashed\`},
		{name: "sql-xml-metacharacters", password: `'; DROP ROLE x; -- <a b="&amp;"/> $$ $1 %s`},
		{name: "latin", password: "pässwörd"},
		{name: "cjk", password: "密码"},
		{name: "zero-width-space", password: "pass\u200bword", twin: "pass word"},
		{name: "soft-hyphen", password: "pass\u00adword", twin: "password"},
		{name: "ligature", password: "\ufb01le-secret", twin: "file-secret"},
		{name: "fullwidth", password: "ｐａｓｓ", twin: "pass"},
		{name: "emoji", password: "key\U0001f511lock"},
		{name: "rtl-hebrew", password: "\u05e1\u05d9\u05e1\u05de\u05d4"},
		{name: "long-ascii-100", password: strings.Repeat("Abc-123_xyz", 9) + "!"},
		{name: "long-mixed-80", password: strings.Repeat("pässwörd 密码 ", 8)},
		{name: "very-long-1000", password: strings.Repeat("0123456789", 100)},
	}
	for i := range 5 {
		cases = append(cases, credCase{name: fmt.Sprintf("random-%d", i+1), password: randomASCII(t, 32)})
	}
	return cases
}

// randomASCII returns n characters drawn uniformly from printable ASCII
// (U+0021 to U+007E) with crypto/rand.
func randomASCII(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		v, err := rand.Int(rand.Reader, big.NewInt(0x7f-0x21))
		if err != nil {
			t.Fatalf("crypto/rand: %v", err)
		}
		b.WriteByte(byte(0x21 + v.Int64()))
	}
	return b.String()
}

// secrets scrubs passwords and verifiers out of text before it is shown.
type secrets struct {
	mu   sync.Mutex
	list []string
}

func (s *secrets) add(v ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range v {
		if x != "" {
			s.list = append(s.list, x)
		}
	}
}

func (s *secrets) scrub(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.list {
		text = strings.ReplaceAll(text, x, "<redacted>")
	}
	return text
}

// result is what a client command did.
type result struct {
	stdout, stderr string
	err            error
}

func (r result) ok() bool { return r.err == nil }

// runCmd runs argv with env (nil: this process's) and stdin, as the server
// user when asServer, for at most timeout.
func runCmd(env []string, stdin string, asServer bool, timeout time.Duration, argv ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = os.TempDir()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if asServer {
		cmd.SysProcAttr = serverProcAttr()
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

// cleanEnv is this process's environment without the variables whose prefix
// is in drop, plus extra.
func cleanEnv(drop []string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range drop {
			if strings.HasPrefix(kv, p) {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return append(slices.Clip(env), extra...)
}

// withEnv returns a copy of env with extra appended (never sharing env's array).
func withEnv(env []string, extra ...string) []string {
	return append(slices.Clip(env), extra...)
}

// The engines refuse to run as root, so when the tests run as root (as CI
// does) the servers run as this system user, created if missing.
const serverUserName = "credo-test"

var serverUser struct {
	once     sync.Once
	uid, gid uint32
	err      error
}

func lookupServerUser() {
	u, err := user.Lookup(serverUserName)
	if err != nil {
		useradd, lerr := exec.LookPath("useradd")
		if lerr != nil {
			useradd = "/usr/sbin/useradd"
		}
		out, aerr := exec.Command(useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", serverUserName).CombinedOutput()
		if aerr != nil {
			serverUser.err = fmt.Errorf("useradd %s: %w: %s", serverUserName, aerr, out)
			return
		}
		if u, err = user.Lookup(serverUserName); err != nil {
			serverUser.err = err
			return
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		serverUser.err = err
		return
	}
	serverUser.uid, serverUser.gid = uint32(uid), uint32(gid)
}

func runningAsRoot() bool { return os.Geteuid() == 0 }

// serverProcAttr makes a child run as the server user when we are root.
func serverProcAttr() *syscall.SysProcAttr {
	if !runningAsRoot() {
		return nil
	}
	serverUser.once.Do(lookupServerUser)
	return &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: serverUser.uid, Gid: serverUser.gid, Groups: []uint32{},
	}}
}

// serverDir returns a fresh t.TempDir() that the server user owns.
func serverDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if !runningAsRoot() {
		return dir
	}
	serverUser.once.Do(lookupServerUser)
	if serverUser.err != nil {
		t.Fatalf("server user %s: %v", serverUserName, serverUser.err)
	}
	// testing creates the per-test parent 0700; let the server user through.
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(filepath.Dir(dir)); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Fatalf("%s is not searchable by %s; set TMPDIR to a directory under /tmp", d, serverUserName)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.Chown(dir, int(serverUser.uid), int(serverUser.gid)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// each runs f(0) to f(n-1) on a few goroutines and returns their results in
// order; assertions stay on the test's goroutine.
func each(n int, f func(i int) result) []result {
	out := make([]result, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				out[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// server is an engine process started by a test and stopped by its cleanup.
type server struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startServer starts argv as the server user, output to logPath, and
// registers a cleanup that stops it with stop (then SIGKILL after 30s).
func startServer(t *testing.T, name, logPath string, stop syscall.Signal, argv ...string) *server {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = filepath.Dir(logPath)
	cmd.SysProcAttr = serverProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	s := &server{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		start := time.Now()
		_ = cmd.Process.Signal(stop)
		select {
		case <-s.done:
			t.Logf("%s stopped in %s", name, time.Since(start).Round(time.Millisecond))
		case <-time.After(30 * time.Second):
			t.Logf("%s did not stop in 30s; killing it", name)
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// waitReady polls probe until it succeeds, the server exits or timeout passes.
func (s *server) waitReady(t *testing.T, timeout time.Duration, probe func() error) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		err := probe()
		if err == nil {
			t.Logf("%s ready in %s", s.name, time.Since(start).Round(time.Millisecond))
			return
		}
		select {
		case <-s.done:
			t.Fatalf("%s exited during start-up (%v); log:\n%s", s.name, s.cmd.ProcessState, tail(s.log, 30))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s: %v; log:\n%s", s.name, timeout, err, tail(s.log, 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tail returns the last n lines of a file (only shown before any secret was
// handed to the server).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
