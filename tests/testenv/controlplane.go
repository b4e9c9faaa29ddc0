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
