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

// Package enrollmenttest starts the enrollment-controller in a test's
// process as its binary builds it. It is apart from testenv, which the
// enrollment packages' own tests import.
package enrollmenttest

import (
	"context"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/tests/testenv"
)

// Start runs the enrollment-controller in this process from args as
// cmd/enrollment-controller builds it: its Options and ListenerOptions
// bound to one flag set and parsed, the listener's options validated, a
// manager of its own with its scheme and cache (testenv.NewSetup), Setup
// and AddListener. tweak, when not nil, changes the listener's
// options after parsing (what no flag reaches). It stops when t ends, or at
// stop, which waits for the manager to return.
func Start(t testing.TB, cfg *rest.Config, args []string, tweak func(*enrollment.ListenerOptions)) (stop func()) {
	t.Helper()
	var enrollOpts enrollment.Options
	listenOpts := enrollment.NewListenerOptions()
	fs := pflag.NewFlagSet(enrollment.ControllerName, pflag.ContinueOnError)
	enrollOpts.BindFlags(fs)
	listenOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the enrollment-controller's flags: %v", err)
	}
	if tweak != nil {
		tweak(listenOpts)
	}
	if err := listenOpts.Validate(); err != nil {
		t.Fatalf("the enrollment-controller's flags: %v", err)
	}
	enrollOpts.Limits = listenOpts.Server.Limits
	setup, err := testenv.NewSetup(cfg, enrollment.NewScheme(), enrollment.ControllerName, enrollment.ConfigureCache)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := enrollment.Setup(ctx, setup, enrollOpts); err != nil {
		cancel()
		t.Fatalf("the enrollment-controller's controllers: %v", err)
	}
	if err := enrollment.AddListener(setup, listenOpts); err != nil {
		cancel()
		t.Fatalf("the enrollment listener: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := setup.Manager.Start(ctx); err != nil {
			t.Errorf("the enrollment-controller's manager: %v", err)
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}
