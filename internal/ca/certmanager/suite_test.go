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

package certmanager

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

var (
	env    *testenv.Env
	issuer *testIssuer
)

func TestMain(m *testing.M) {
	code := testenv.Main(m, testenv.Options{
		ControlPlane: controlplane.Options{CRDPaths: []string{"testdata"}, NoControllerManager: true},
		NoManager:    true,
	}, func(ctx context.Context, e *testenv.Env) error {
		env = e
		pki, err := newTestPKI()
		if err != nil {
			return fmt.Errorf("creating the test PKI: %w", err)
		}
		c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		if err != nil {
			return fmt.Errorf("creating the issuer's client: %w", err)
		}
		issuer = &testIssuer{client: c, pki: pki, seen: map[string]map[string]any{}}
		go issuer.run(ctx)
		return nil
	})
	if env != nil {
		if out := env.Logs.String(); strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "CERTIFICATE REQUEST") {
			fmt.Fprintln(os.Stderr, "FAIL: the CA logged key or CSR material")
			code = 1
		}
	}
	os.Exit(code)
}
