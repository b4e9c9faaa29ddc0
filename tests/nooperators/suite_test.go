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

// Package nooperators runs the credential-controller on a control plane
// without the CRDs of the database operators it observes for the Applied
// condition (CloudNativePG, mariadb-operator): the cluster of a platform
// that installed neither.
package nooperators

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

const platformNamespace = "credo-system"

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		ControlPlane:   controlplane.Options{CRDPaths: withoutOperatorCRDs()},
		ControllerName: credentials.ControllerName,
		ConfigureCache: credentials.ConfigureCache,
	}, func(ctx context.Context, e *testenv.Env) error {
		env = e
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}}); err != nil {
			return err
		}
		return credentials.Setup(ctx, e.Setup, credentials.Options{AnnotationDomain: "credentials.cozystack.io", PlatformNamespace: platformNamespace})
	}))
}

// withoutOperatorCRDs are the CRD files every environment installs, but
// the database operators' (postgresql.cnpg.io, k8s.mariadb.com).
func withoutOperatorCRDs() []string {
	var paths []string
	for _, dir := range controlplane.CRDPaths() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			panic(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "postgresql.cnpg.io_") || strings.HasPrefix(e.Name(), "k8s.mariadb.com_") {
				continue
			}
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths
}
