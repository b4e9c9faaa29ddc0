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

// Command credo-node runs a one-node cluster on this machine (tests/node:
// the control plane, containerd, kubelet, kube-scheduler, kube-proxy),
// imports a release's image, and runs a command against the cluster: the
// command gets KUBECONFIG (an administrator's), IMAGE (the release image's
// name in the node's runtime) and kubectl on its PATH. The cluster is
// stopped and the machine restored when the command ends, or, with
// --wait, on SIGINT or SIGTERM. Its exit code is the command's.
//
//	credo-node --release dist/v0.1.0/oci -- hack/ci/e2e.sh
//	credo-node --release dist/v0.1.0/oci --wait -- hack/ci/install.sh
//
// It needs root, and Debian's containerd, runc and CNI plugins
// (hack/node/install.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/node"
)

func main() {
	os.Exit(run())
}

func run() int {
	var release, kubeconfig, dir string
	var wait, keep bool
	// A flag set of its own: controller-runtime registers --kubeconfig on
	// the global one.
	flag := flag.NewFlagSet("credo-node", flag.ExitOnError)
	flag.StringVar(&release, "release", "", "the release's OCI layout (hack/release build --out DIR: DIR/oci) whose image is imported")
	flag.StringVar(&kubeconfig, "kubeconfig", "", "also copy the administrator's kubeconfig here")
	flag.StringVar(&dir, "dir", "", "the node's directory (logs, kubeconfigs); default a temporary one, removed at the end")
	flag.BoolVar(&wait, "wait", false, "after the command, keep the cluster until SIGINT or SIGTERM")
	flag.BoolVar(&keep, "keep", false, "keep the node's directory at the end (its logs)")
	_ = flag.Parse(os.Args[1:])
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "credo-node: "+format+"\n", args...)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	c, err := node.StartCluster(ctx, node.ClusterOptions{
		Dir: dir, Keep: keep, Logf: logf,
		// Bare, as a new cluster: the command installs the CRDs it needs.
		ControlPlane: controlplane.Options{CRDPaths: []string{}},
	})
	if err != nil {
		logf("starting the node: %v", err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			logf("stopping the node: %v", err)
		}
	}()
	env := []string{"KUBECONFIG=" + c.Env.Kubeconfig}
	if release != "" {
		name, err := c.ImportRelease(ctx, release)
		if err != nil {
			logf("importing the release image: %v", err)
			return 1
		}
		logf("imported %s", name)
		env = append(env, "IMAGE="+name)
	}
	if kubeconfig != "" {
		data, err := os.ReadFile(c.Env.Kubeconfig)
		if err == nil {
			err = os.WriteFile(kubeconfig, data, 0o600)
		}
		if err != nil {
			logf("writing %s: %v", kubeconfig, err)
			return 1
		}
	}
	logf("cluster ready in %s; KUBECONFIG=%s, logs in %s", time.Since(start).Round(time.Second), c.Env.Kubeconfig, c.Dir)

	code := 0
	if args := flag.Args(); len(args) > 0 {
		code = command(ctx, args, env, logf)
	}
	if wait && ctx.Err() == nil {
		logf("running until interrupted")
		<-ctx.Done()
	}
	return code
}

// command runs args with env added and kubectl on the PATH, and returns
// its exit code.
func command(ctx context.Context, args, env []string, logf func(string, ...any)) int {
	assets, err := controlplane.AssetsDir()
	if err != nil {
		logf("%v", err)
		return 1
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "PATH="+assets+string(filepath.ListSeparator)+os.Getenv("PATH"))
	// On SIGINT or SIGTERM the command gets SIGTERM, then a minute.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		logf("%s: %v", args[0], err)
		return exit.ExitCode()
	default:
		logf("%s: %v", args[0], err)
		return 1
	}
}
