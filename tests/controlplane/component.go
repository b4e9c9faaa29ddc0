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

package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is a process started against the control plane (a component of it,
// or a controller under test), its output going to a log file in the
// environment directory.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan error
}

// PID is the process id.
func (c *Process) PID() int { return c.cmd.Process.Pid }

// Binary is the path of the executable.
func (c *Process) Binary() string { return c.cmd.Path }

// LogPath is the file the process writes its output to.
func (c *Process) LogPath() string { return c.log.Name() }

// StartProcess starts binary with args and extra environment variables
// (KUBECONFIG points at the environment's admin kubeconfig), its stdout and
// stderr written to <Dir>/<name>.log. Stop stops it before the control plane.
func (e *Environment) StartProcess(name, binary string, env []string, args ...string) (*Process, error) {
	p, err := startProcess(e.Dir, name, binary, append([]string{"KUBECONFIG=" + e.Kubeconfig}, env...), args...)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, p)
	return p, nil
}

// StartProcessIn starts a process as StartProcess does, its log in dir, tied
// to no Environment: the caller stops it (a node's container runtime).
func StartProcessIn(dir, name, binary string, env []string, args ...string) (*Process, error) {
	return startProcess(dir, name, binary, env, args...)
}

func startProcess(dir, name, binary string, env []string, args ...string) (*Process, error) {
	// Appended: a restarted process keeps the log of its earlier run.
	logFile, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &Process{name: name, cmd: cmd, log: logFile, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	return c, nil
}

// Exited reports whether the process has ended, and how.
func (c *Process) Exited() (bool, error) {
	select {
	case err := <-c.done:
		c.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM and waits up to grace before killing the process group.
// Stopping a stopped process does nothing.
func (c *Process) Stop(grace time.Duration) error {
	defer c.log.Close()
	if ok, _ := c.Exited(); ok {
		return nil
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	var err error
	select {
	case err = <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		err = <-c.done
	}
	// Keep the outcome for Exited and for a second Stop.
	c.done <- err
	return nil
}

// Pause freezes the process (SIGSTOP): it holds its state and its
// connections and does nothing until Resume, as a controller that is slow
// to act.
func (c *Process) Pause() error { return syscall.Kill(c.cmd.Process.Pid, syscall.SIGSTOP) }

// Resume lets a paused process go on (SIGCONT).
func (c *Process) Resume() error { return syscall.Kill(c.cmd.Process.Pid, syscall.SIGCONT) }

// FailIfExited returns an error naming the log when the process has ended.
func (c *Process) FailIfExited() error {
	if ok, err := c.Exited(); ok {
		if err == nil {
			return fmt.Errorf("%s exited; see %s", c.name, c.log.Name())
		}
		return fmt.Errorf("%s exited (%w); see %s", c.name, err, c.log.Name())
	}
	return nil
}

// WaitReady waits until url (the process's readiness probe) answers 200 OK,
// failing early when the process exits; the error carries the log's tail.
func (c *Process) WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.FailIfExited(); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be ready (log: %s): %w\n%s", c.name, c.LogPath(), err, c.Tail(20))
	}
	return nil
}

// Tail returns the last n lines of the process's log.
func (c *Process) Tail(n int) string {
	b, err := os.ReadFile(c.LogPath())
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
