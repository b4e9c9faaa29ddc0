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

package enrollment

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/testenv"
)

var (
	// env is the real control plane every test of this package runs on,
	// with the enrollment-controller's reconcilers running in-process,
	// built by Setup as cmd/enrollment-controller builds them.
	env *testenv.Env

	// testPendingTimeout is the WorkloadReconciler's PendingTimeout here:
	// short, so that the collection of pending workloads is seen.
	testPendingTimeout = 4 * time.Second
	// testPendingMarkDelay is its PendingMarkDelay.
	testPendingMarkDelay = 1500 * time.Millisecond
	// testDenialsPolicySettle is its DenialsPolicySettle: short, so that a
	// Workload created after the policy is installed soon counts as newer.
	testDenialsPolicySettle = 2 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{ControllerName: ControllerName, ConfigureCache: ConfigureCache},
		func(ctx context.Context, e *testenv.Env) error {
			env = e
			return Setup(ctx, e.Setup, Options{Concurrent: 2, PendingTimeout: testPendingTimeout,
				PendingMarkDelay: testPendingMarkDelay, DenialsPolicySettle: testDenialsPolicySettle, Limits: enrollment.DefaultLimits()})
		}))
}
