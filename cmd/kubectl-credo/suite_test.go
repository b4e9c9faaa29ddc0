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
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testenv/accessapitest"
)

// The tests that need the real API server share one control plane, started
// by the first of them: the printing tests run without it. It is etcd,
// kube-apiserver with credo's CRDs and the aggregation layer, and the access
// API served in-process and registered as an APIService.
var sharedControlPlane = &testenv.Lazy{
	Options: controlplane.Options{Aggregation: true, NoControllerManager: true},
	Setup:   startAccessAPI,
}

// runMainEnv set to 1 makes the test binary run kubectl-credo's main with
// its arguments instead of the tests: the tests run the real command and
// read its exit status.
const runMainEnv = "KUBECTL_CREDO_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	klog.SetLogger(logr.Discard())
	code := m.Run()
	sharedControlPlane.Stop()
	os.Exit(code)
}

// controlPlane returns the shared control plane.
func controlPlane(t *testing.T) *controlplane.Environment {
	t.Helper()
	return sharedControlPlane.Get(t)
}

// startAccessAPI serves access.credo.dev in-process, as credential-controller
// does, with an identity that holds only the delegated-auth bindings.
func startAccessAPI(ctx context.Context, env *controlplane.Environment) error {
	direct, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		return fmt.Errorf("creating the access API's client: %w", err)
	}
	_, err = accessapitest.StartAccessAPI(ctx, env, "credo-access-api",
		&accessapi.Operations{Client: direct, Keys: account.NewKeys("credentials.cozystack.io")})
	return err
}
