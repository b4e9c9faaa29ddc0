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

package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/credo-dev/credo/tests/controlplane"
)

// ControlPlane starts a control plane of the test's own (or the
// benchmark's), stopped when it ends: for the tests that need one apart
// from their package's suite (Main), because they stop it, audit it, or
// measure the processes they run against it.
func ControlPlane(tb testing.TB, opts controlplane.Options) *controlplane.Environment {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := controlplane.Start(ctx, opts)
	if err != nil {
		tb.Fatalf("starting the control plane: %v", err)
	}
	tb.Cleanup(func() {
		if err := env.Stop(); err != nil {
			tb.Logf("stopping the control plane: %v", err)
		}
	})
	return env
}

// Lazy is a control plane the tests of one binary share, started by the
// first test that asks for it (Get), so that the tests that need none run
// without one; TestMain stops it (Stop) after m.Run.
//
//	var cp = &testenv.Lazy{Options: controlplane.Options{Aggregation: true}, Setup: startAccessAPI}
type Lazy struct {
	// Options configure the control plane.
	Options controlplane.Options
	// Setup, when set, runs once the control plane is up, with a context
	// that ends at Stop (servers it starts run until then).
	Setup func(ctx context.Context, env *controlplane.Environment) error

	once   sync.Once
	env    *controlplane.Environment
	err    error
	cancel context.CancelFunc
}

// Get returns the shared control plane, starting it on the first call.
func (l *Lazy) Get(tb testing.TB) *controlplane.Environment {
	tb.Helper()
	l.once.Do(func() {
		var ctx context.Context
		ctx, l.cancel = context.WithCancel(context.Background())
		startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if l.env, l.err = controlplane.Start(startCtx, l.Options); l.err != nil || l.Setup == nil {
			return
		}
		l.err = l.Setup(ctx, l.env)
	})
	if l.err != nil {
		tb.Fatalf("starting the control plane: %v", l.err)
	}
	return l.env
}

// Stop stops the control plane if a test started it.
func (l *Lazy) Stop() {
	if l.cancel != nil {
		l.cancel()
	}
	if l.env != nil {
		if err := l.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}
}
