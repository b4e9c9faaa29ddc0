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

// Command credo-agent enrolls the host it runs on as a credo workload with a
// join token, keeps its key, certificate and trust bundle in a state
// directory, and renews the certificate until stopped:
//
//	credo-agent --server https://enroll.example.com:8443 \
//	  --ca-file /etc/credo/enrollment-ca.pem \
//	  --token-file /etc/credo/join-token \
//	  --state-dir /var/lib/credo-agent --label role=db
//
// Exit codes: 0 when stopped by a signal (or after --help or --version), 1
// on an error, 2 for bad flags (or no certificate and no token), 3 when the
// workload must enroll again with a new join token (the log names the
// reason: DuplicateIdentity, RenewalGraceExceeded, ...), 4 when the workload
// is denied (an operator locked it out; the log gives the denial's reason,
// and the agent renews again once it is lifted). Under systemd, RestartPreventExitStatus=2 3 4
// keeps it from restarting in a loop that only a person can end.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/internal/version"
	"github.com/credo-dev/credo/pkg/agent"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// name is the binary's one name, which --version prints.
const name = "credo-agent"

// Exit codes.
const (
	exitOK           = 0
	exitError        = 1
	exitUsage        = 2
	exitReenrollment = 3
	exitDenied       = 4
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command line.
type options struct {
	server             string
	caFile             string
	token              string
	tokenFile          string
	stateDir           string
	hostname           string
	labels             []string
	bundlePollInterval time.Duration
	logLevel           string
	version            bool
}

func (o *options) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.server, "server", "", "The enrollment server's URL, https://host[:port]. Required.")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM file of the CAs that verify the enrollment server at first contact. Required.")
	fs.StringVar(&o.tokenFile, "token-file", "", "File holding the join token, from 'kubectl credo token create <policy>'; read only when enrolling.")
	fs.StringVar(&o.token, "token", "", "The join token. Visible to every user of the host in the process list: prefer --token-file.")
	fs.StringVar(&o.stateDir, "state-dir", "/var/lib/credo-agent", "Directory of key.pem, cert.pem, bundle.pem, state.json and, while a renewal is in flight, renewal.json.")
	fs.StringVar(&o.hostname, "hostname", "", "Hostname recorded in the Workload (default: the system's hostname).")
	fs.StringArrayVar(&o.labels, "label", nil, "A label key=value the workload asks for; repeatable.")
	fs.DurationVar(&o.bundlePollInterval, "bundle-poll-interval", agent.DefaultBundlePollInterval, "How often the trust bundle is fetched; 0 disables polling (renewals still bring it).")
	fs.StringVar(&o.logLevel, "log-level", "info", "Log level: debug, info, warn or error.")
	fs.BoolVar(&o.version, "version", false, "Print the version, commit and Go version, and exit.")
}

// config checks the flags and returns the agent's configuration.
func (o *options) config() (agent.Config, slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return agent.Config{}, 0, fmt.Errorf("--log-level: %w", err)
	}
	switch {
	case o.server == "":
		return agent.Config{}, 0, errors.New("--server is required")
	case o.caFile == "":
		return agent.Config{}, 0, errors.New("--ca-file is required")
	case o.token != "" && o.tokenFile != "":
		return agent.Config{}, 0, errors.New("give --token or --token-file, not both")
	case o.bundlePollInterval < 0:
		return agent.Config{}, 0, errors.New("--bundle-poll-interval must not be negative")
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return agent.Config{}, 0, fmt.Errorf("--label %q: want key=value", l)
		}
		if _, dup := labels[k]; dup {
			return agent.Config{}, 0, fmt.Errorf("--label %s is given twice", k)
		}
		labels[k] = v
	}
	poll := o.bundlePollInterval
	if poll == 0 {
		poll = -1 // the library reads zero as the default
	}
	return agent.Config{
		Server:             o.server,
		CAFile:             o.caFile,
		Token:              o.token,
		TokenFile:          o.tokenFile,
		StateDir:           o.stateDir,
		Hostname:           o.hostname,
		Labels:             labels,
		BundlePollInterval: poll,
	}, level, nil
}

// run is the command; it returns the exit code. Only --version writes to
// stdout; the log goes to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	o.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if o.version {
		if err := version.Print(stdout, name); err != nil {
			return exitError
		}
		return exitOK
	}
	cfg, level, err := o.config()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = log
	if o.token != "" {
		log.Warn("--token is visible to every user of this host in the process list; prefer --token-file")
	}
	a, err := agent.New(cfg)
	if err != nil {
		log.Error("cannot start", "error", err.Error())
		return exitUsage
	}
	err = a.Run(ctx) //nolint:staticcheck // SA4023, the err == nil case below.
	switch {
	//nolint:staticcheck // SA4023: Run returns nil on no path today; err == nil keeps this switch safe if it ever does.
	case err == nil, ctx.Err() != nil && errors.Is(err, ctx.Err()):
		log.Info("stopped")
		return exitOK
	case errors.Is(err, agent.ErrDenied):
		log.Error("the workload is denied: an operator locked it out; it renews again once the denial is lifted "+
			"(`kubectl credo workload undeny <uuid>`), with the state directory as it is", "reason", enrollapi.ReasonDenied, "error", err.Error())
		return exitDenied
	case errors.Is(err, agent.ErrReenrollmentRequired):
		log.Error("re-enrollment is needed: create a new join token with `kubectl credo token create <policy>` "+
			"and restart credo-agent with it (--token-file)", "error", err.Error())
		return exitReenrollment
	case errors.Is(err, agent.ErrTokenRequired):
		log.Error("cannot enroll: give a join token with --token-file (create one with `kubectl credo token create <policy>`)",
			"stateDir", cfg.StateDir)
		return exitUsage
	default:
		log.Error("stopped with an error", "error", err.Error())
		return exitError
	}
}
