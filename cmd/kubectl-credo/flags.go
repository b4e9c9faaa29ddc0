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
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// command is one verb's command line: its usage, its own flags, and the
// kubeconfig flags every verb that talks to the cluster shares, which
// --help lists last, under "Global flags:". A verb that talks to the
// cluster opens with run (cluster.go); one that does not parses alone:
//
//	cmd := newCommand("hash", "usage: kubectl credo hash --format <format> ...")
//	format := cmd.fs.String("format", "", "...")
//	if help, err := cmd.parse(args, stdout); help || err != nil {
//		return err
//	}
type command struct {
	name  string
	usage string
	// fs holds the verb's own flags, and after parse the global ones too.
	fs *pflag.FlagSet
	// global holds the kubeconfig flags; empty for a verb that does not
	// talk to the cluster.
	global *pflag.FlagSet
	// cl is bound to global by cluster.
	cl *cluster
	// checks refuse the verb's flags or stdout before run contacts the
	// cluster.
	checks []func() error
}

func newCommand(name, usage string) *command {
	c := &command{
		name:   name,
		usage:  usage,
		fs:     pflag.NewFlagSet(name, pflag.ContinueOnError),
		global: pflag.NewFlagSet(name+" (global)", pflag.ContinueOnError),
	}
	// Errors are returned, and --help prints c.help: pflag prints nothing.
	c.fs.SetOutput(io.Discard)
	c.fs.Usage = func() {}
	return c
}

// cluster binds the kubeconfig flags (--kubeconfig, --context, -n, ... as
// kubectl) as the verb's global flags, once.
func (c *command) cluster() *cluster {
	if c.cl == nil {
		c.cl = bindCluster(c.global)
	}
	return c.cl
}

// check adds a check of the verb's flags or stdout that run makes after
// counting the arguments, before it contacts the cluster.
func (c *command) check(f func() error) { c.checks = append(c.checks, f) }

// bindCluster binds the kubeconfig flags to fs.
func bindCluster(fs *pflag.FlagSet) *cluster {
	cl := &cluster{flags: genericclioptions.NewConfigFlags(true)}
	cl.flags.AddFlags(fs)
	return cl
}

// parse parses args. On -h or --help it prints the help on stdout and
// returns true: the verb stops there, successfully.
func (c *command) parse(args []string, stdout io.Writer) (help bool, err error) {
	c.fs.AddFlagSet(c.global)
	switch err := c.fs.Parse(args); {
	case errors.Is(err, pflag.ErrHelp):
		return true, c.help(stdout)
	case err != nil:
		return false, fmt.Errorf("%w (kubectl credo %s --help lists the flags)", err, c.name)
	}
	return false, nil
}

// help prints the usage, the verb's own flags, then the global flags.
func (c *command) help(w io.Writer) error {
	own := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	c.fs.VisitAll(func(f *pflag.Flag) {
		if c.global.Lookup(f.Name) == nil {
			own.AddFlag(f)
		}
	})
	var b strings.Builder
	b.WriteString(strings.TrimRight(c.usage, "\n") + "\n")
	if own.HasFlags() {
		b.WriteString("\nFlags:\n" + own.FlagUsages())
	}
	if c.global.HasFlags() {
		b.WriteString("\nGlobal flags:\n" + c.global.FlagUsages())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// subcommands runs the verb of group (token, workload) that args[0] names;
// help, -h and --help print the group's usage.
//
//	return subcommands("token", tokenUsage, args, stdout, map[string]verb{"create": tokenCreate})
func subcommands(group, usage string, args []string, stdout io.Writer, verbs map[string]verb) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "help", "-h", "--help":
		_, err := fmt.Fprintln(stdout, usage)
		return err
	}
	run, ok := verbs[args[0]]
	if !ok {
		return fmt.Errorf("unknown %s command %q\n%s", group, args[0], usage)
	}
	return run(args[1:], stdout)
}

// verb runs one command with its arguments.
type verb func(args []string, stdout io.Writer) error
