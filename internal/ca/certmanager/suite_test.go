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
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testlog"
)

var (
	env    *controlplane.Environment
	logs   testlog.Buffer
	issuer *testIssuer
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var sink io.Writer = &logs
	if os.Getenv("CREDO_TEST_LOG") != "" {
		sink = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(sink), zap.UseDevMode(true), zap.Level(zapcore.Level(-5))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 5*time.Minute)
	var err error
	env, err = controlplane.Start(startCtx, controlplane.Options{
		CRDPaths:            []string{"testdata"},
		NoControllerManager: true,
	})
	startCancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer env.Stop()

	pki, err := newTestPKI()
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating the test PKI: %v\n", err)
		return 1
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating the issuer's client: %v\n", err)
		return 1
	}
	issuer = &testIssuer{client: c, pki: pki, seen: map[string]map[string]any{}}
	go issuer.run(ctx)

	code := m.Run()
	if out := logs.String(); strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "CERTIFICATE REQUEST") {
		fmt.Fprintln(os.Stderr, "FAIL: the CA logged key or CSR material")
		return 1
	}
	return code
}
