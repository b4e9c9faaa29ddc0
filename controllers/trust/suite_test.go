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

package trust

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"

	"github.com/credo-dev/credo/tests/testenv"
)

const (
	testDomain = "internal.cozystack.io"
	// testSourceNamespace is the platform's source namespace
	// (--platform-source-namespaces) of the suite.
	testSourceNamespace = "platform-sources"
)

var (
	// env is the real control plane every test of this package runs on,
	// with the trust-controller's reconcilers running in-process, built
	// by Setup as cmd/trust-controller builds them.
	env      *testenv.Env
	testKeys = trustv1.NewContractKeys(testDomain)
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{ControllerName: ControllerName, ConfigureCache: ConfigureCache},
		func(ctx context.Context, e *testenv.Env) error {
			env = e
			if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testSourceNamespace}}); err != nil {
				return err
			}
			return Setup(ctx, e.Setup, Options{
				PlatformSourceNamespaces: []string{testSourceNamespace},
				LabelDomain:              testDomain,
				// Benchmarks run a manager of their own on namespaces
				// labelled benchNamespaceLabel, and the takeover tests one
				// with --tenant-projections=credo on those labelled
				// takeoverNamespaceLabel (tenantprojection_test.go).
				NamespaceSelector:   "!" + benchNamespaceLabel + ",!" + takeoverNamespaceLabel,
				ExpiryWarningWindow: 30 * 24 * time.Hour,
				Concurrent:          4,
			})
		}))
}
