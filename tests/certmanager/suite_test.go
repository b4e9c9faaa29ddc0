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

// Package certmanager proves the enrollment-controller's cert-manager CA
// (--certificate-authority=cert-manager) against cert-manager itself: its
// controllers as released (hack/build-cert-manager.sh, `make cert-manager`)
// run as a process on the real control plane with cert-manager's CRDs, a CA
// Issuer backed by a CA Secret signs, cert-manager's approver approves, and
// the enrollment-controller is built from its flags as
// cmd/enrollment-controller builds it. The suite's manager is the
// trust-controller's, which projects the anchor the enrollment-controller
// declares.
package certmanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	assets, err := controlplane.CertManagerAssetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cp := controlplane.Options{CRDPaths: append(controlplane.CRDPaths(), filepath.Join(assets, "crds"))}
	code := testenv.Main(m, testenv.Options{ControlPlane: cp, ControllerName: trust.ControllerName, ConfigureCache: trust.ConfigureCache},
		func(ctx context.Context, e *testenv.Env) error {
			env = e
			if _, err := e.StartCertManager(); err != nil {
				return fmt.Errorf("starting cert-manager: %w", err)
			}
			return trust.Setup(ctx, e.Setup, trust.Options{LabelDomain: "internal.cozystack.io", Concurrent: 2})
		})
	if env != nil {
		if out := env.Logs.String(); strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "CERTIFICATE REQUEST") {
			fmt.Fprintln(os.Stderr, "FAIL: key or CSR material was logged")
			code = 1
		}
	}
	os.Exit(code)
}
