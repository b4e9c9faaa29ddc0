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

// Package testenv runs a test binary's suite on the real control plane
// (tests/controlplane) with a manager built as the binaries build theirs:
// one logger whose every line is kept to be searched for secrets, one
// control plane, one manager and its runtime (internal/manager.Setup), the
// components added by the suite's own setup through the same constructors
// cmd/ uses. It also holds the helpers the suites share.
package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/metrics"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/credo-dev/credo/internal/manager"
	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testlog"
)

// Env is a running control plane, the manager the suite's components run
// in, and everything they logged.
type Env struct {
	*controlplane.Environment
	// Logs holds every log line of the suite's components; CREDO_TEST_LOG
	// prints them too.
	Logs *testlog.Buffer
	// Setup is the manager and its runtime, as manager.New returns them to
	// a binary: the suite passes it to the component's Setup.
	Setup *manager.Setup
}

// Options configure Main.
type Options struct {
	// ControlPlane configures the control plane.
	ControlPlane controlplane.Options
	// ControllerName names the events' reporting controller.
	ControllerName string
	// Scheme is the manager's scheme; the control plane's when nil.
	Scheme *runtime.Scheme
	// ConfigureCache sets the manager's cache options, as the binary's
	// ConfigureCache does; nil leaves controller-runtime's defaults.
	ConfigureCache func(*ctrl.Options, shard.Shard)
	// NoManager starts the control plane only.
	NoManager bool
	// User, when set, is who the manager authenticates as (with Groups),
	// instead of the control plane's administrator: a controller's
	// ServiceAccount, held to the RBAC the suite's setup binds to it.
	User string
	// Groups are User's groups.
	Groups []string
	// LogLevel is the zap level of the logger; debug (-5) when zero.
	LogLevel zapcore.Level
}

// Main runs m's tests on a fresh control plane: it sets the logger, starts
// the control plane and a manager, calls setup (which adds the suite's
// components), starts the manager and runs the tests. It returns the exit
// code for os.Exit.
func Main(m *testing.M, opts Options, setup func(ctx context.Context, env *Env) error) int {
	env := &Env{Logs: &testlog.Buffer{}}
	var sink io.Writer = env.Logs
	if os.Getenv("CREDO_TEST_LOG") != "" {
		sink = io.MultiWriter(env.Logs, os.Stderr)
	}
	level := opts.LogLevel
	if level == 0 {
		level = zapcore.Level(-5)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(sink), zap.UseDevMode(true), zap.Level(level)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 5*time.Minute)
	cp, err := controlplane.Start(startCtx, opts.ControlPlane)
	startCancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	env.Environment = cp
	if !opts.NoManager {
		name := opts.ControllerName
		if name == "" {
			name = "credo-test"
		}
		scheme := opts.Scheme
		if scheme == nil {
			scheme = cp.Scheme
		}
		cfg := cp.Config
		if opts.User != "" {
			if cfg, err = cp.UserConfig(opts.User, opts.Groups); err != nil {
				fmt.Fprintf(os.Stderr, "the manager's user: %v\n", err)
				return 1
			}
		}
		if env.Setup, err = NewSetup(cfg, scheme, name, opts.ConfigureCache); err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			return 1
		}
	}
	if setup != nil {
		if err := setup(ctx, env); err != nil {
			fmt.Fprintf(os.Stderr, "setting up the suite: %v\n", err)
			return 1
		}
	}
	if env.Setup != nil {
		mgr := env.Setup.Manager
		go func() {
			if err := mgr.Start(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "manager: %v\n", err)
			}
		}()
		syncCtx, syncCancel := context.WithTimeout(ctx, 2*time.Minute)
		synced := mgr.GetCache().WaitForCacheSync(syncCtx)
		syncCancel()
		if !synced {
			fmt.Fprintln(os.Stderr, "the manager's cache did not sync")
			return 1
		}
	}
	return m.Run()
}

// NewSetup builds a manager and its runtime on cfg as manager.New does
// for a binary, with no metrics or health listener: the metrics recorder
// is the caller's own (controller-runtime's registry holds one per
// process). configureCache, when not nil, is the binary's ConfigureCache.
func NewSetup(cfg *rest.Config, scheme *runtime.Scheme, controllerName string, configureCache func(*ctrl.Options, shard.Shard)) (*manager.Setup, error) {
	mgrOpts := ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Several managers of one test binary may register a controller
		// of the same name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	stopEvents := manager.EventBroadcaster(&mgrOpts)
	if configureCache != nil {
		configureCache(&mgrOpts, shard.Shard{})
	}
	cfg = manager.Named(rest.CopyConfig(cfg), &mgrOpts, controllerName)
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := stopEvents(mgr); err != nil {
		return nil, err
	}
	recorder, err := events.NewRecorder(ctrl.Log, "", controllerName, events.WithManager(mgr))
	if err != nil {
		return nil, fmt.Errorf("creating the event recorder: %w", err)
	}
	return &manager.Setup{Manager: mgr, Recorder: recorder, Metrics: metrics.NewRecorder()}, nil
}
