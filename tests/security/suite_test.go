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

// Package security tests what docs/security.md promises, on the real
// control plane with role aggregation on: what the built-in view, edit and
// admin roles give a tenant once credo's roles are aggregated into them,
// the shipped example tenant role, the ValidatingAdmissionPolicy of
// config/admission, and the CEL validation of the trust kinds. The
// trust-controller runs in-process as its own ServiceAccount, bound by the
// RBAC config/rbac ships; each controller's ServiceAccount has the least
// privilege its code needs (leastprivilege_test.go).
package security

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

const (
	// domain is the trust-controller's default --label-domain.
	domain = "internal.cozystack.io"
	// platformNamespace is where config/ installs credo.
	platformNamespace = "credo-system"
)

var (
	env  *controlplane.Environment
	keys = trustv1.NewContractKeys(domain)
	// trustControllerUser is the trust-controller's ServiceAccount, as
	// config/manager runs it.
	trustControllerUser, trustControllerGroups = controlplane.ServiceAccountUser(platformNamespace, "credo-trust-controller")
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		ControllerName: trust.ControllerName, ConfigureCache: trust.ConfigureCache,
		User: trustControllerUser, Groups: trustControllerGroups,
	}, func(ctx context.Context, e *testenv.Env) error {
		env = e.Environment
		klog.SetLogger(logr.Discard())
		if err := install(ctx); err != nil {
			return fmt.Errorf("installing credo's RBAC: %w", err)
		}
		// The TrustAnchor and TrustSource reconcilers run in-process,
		// built as cmd/trust-controller builds them, authenticated as the
		// trust-controller's ServiceAccount with only the RBAC config/rbac
		// binds to it.
		return trust.Setup(ctx, e.Setup, trust.Options{LabelDomain: domain, ExpiryWarningWindow: 30 * 24 * time.Hour, Concurrent: 2})
	}))
}

// install creates the platform namespace and applies the RBAC credo ships:
// config/rbac (each controller's roles bound to its ServiceAccount, the
// roles aggregated into view, edit and admin) and the access API's roles.
func install(ctx context.Context) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}}); err != nil {
		return err
	}
	for _, dir := range []string{"config/rbac", "config/apiservice"} {
		objs, err := kustomize(dir)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.GetAPIVersion() != "rbac.authorization.k8s.io/v1" && o.GetKind() != "ServiceAccount" {
				continue
			}
			if err := apply(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// kustomize builds a directory of the repository, as kubectl apply -k does.
func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	return testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), dir))
}

// apply server-side applies obj as the platform's administrator.
func apply(ctx context.Context, obj *unstructured.Unstructured) error {
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("platform-admin"), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}
