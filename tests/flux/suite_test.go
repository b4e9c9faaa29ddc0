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

// Package flux tests what credo ships for Flux against the real Flux CRDs
// (generated from their Go API modules into config/testdata/crds) on the
// local control plane: the samples that install credo through Flux, the
// notification-controller component and Alert, and the events a real
// trust-controller posts to a notification-controller-compatible receiver.
package flux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

var env *controlplane.Environment

func TestMain(m *testing.M) {
	// No kube-controller-manager: nothing here needs garbage collection.
	// No manager either: the tests run credo's binaries as processes.
	// Aggregation: the install through kustomize-controller waits for the
	// access API's APIService to be Available.
	os.Exit(testenv.Main(m, testenv.Options{ControlPlane: controlplane.Options{NoControllerManager: true, Aggregation: true}, NoManager: true},
		func(ctx context.Context, e *testenv.Env) error {
			env = e.Environment
			for _, ns := range []string{"flux-system", "credo-system", "tenant-demo"} {
				if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					return fmt.Errorf("creating namespace %s: %w", ns, err)
				}
			}
			return nil
		}))
}

// repoPath is a path inside the repository.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{controlplane.RepoRoot()}, elem...)...)
}

// build runs kustomize on dir, as `kubectl kustomize` and kustomize-controller do.
func build(g Gomega, dir string) []*unstructured.Unstructured {
	objs, err := testenv.Kustomize(dir)
	g.Expect(err).NotTo(HaveOccurred())
	return objs
}

// dryRun creates obj with server-side dry run and strict field validation:
// the API server checks it against the CRD's schema (unknown and duplicate
// fields are errors) and runs admission, but stores nothing.
func dryRun(ctx context.Context, obj *unstructured.Unstructured) error {
	return env.Client.Create(ctx, obj.DeepCopy(), client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
}

// dryRunAll dry-runs every object, naming the first that fails.
func dryRunAll(g Gomega, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		g.Expect(dryRun(context.Background(), o)).To(Succeed(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	}
}

// isInvalid reports whether err is the API server refusing an object's content.
func isInvalid(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err))
}

// byKind returns the objects of kind.
func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}
