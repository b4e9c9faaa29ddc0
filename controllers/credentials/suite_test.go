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

package credentials

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credo-dev/credo/tests/testenv"
)

const (
	testAnnotationDomain  = "credentials.cozystack.io"
	testPlatformNamespace = "credo-system"
	// testSourceNamespace is the platform's source namespace
	// (--platform-source-namespaces) of the suite.
	testSourceNamespace = "platform-sources"
)

// The suite's limits of what AccountSources generate, low enough for a
// test to reach.
const (
	testMaxAccountsPerRelease           = 8
	testMaxAccountsPerNamespace         = 16
	testMaxPlatformAccountsPerNamespace = 3
)

var (
	// env is the real control plane every test of this package runs on,
	// with the credential-controller's reconcilers running in-process,
	// built by Setup as cmd/credential-controller builds them.
	env             *testenv.Env
	testAccountKeys = NewAccountKeys(testAnnotationDomain)
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{ControllerName: ControllerName, ConfigureCache: ConfigureCache},
		func(ctx context.Context, e *testenv.Env) error {
			env = e
			for _, name := range []string{testPlatformNamespace, testSourceNamespace} {
				if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
					return err
				}
			}
			return Setup(ctx, e.Setup, Options{AnnotationDomain: testAnnotationDomain, PlatformNamespace: testPlatformNamespace,
				PlatformSourceNamespaces: []string{testSourceNamespace},
				MaxAccountsPerRelease:    testMaxAccountsPerRelease, MaxAccountsPerNamespace: testMaxAccountsPerNamespace,
				MaxPlatformAccountsPerNamespace: testMaxPlatformAccountsPerNamespace,
				// The flag's default, as cmd/credential-controller binds it.
				ValuesFromOwnerSelector: DefaultValuesFromOwnerSelector})
		}))
}
