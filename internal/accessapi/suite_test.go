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

package accessapi_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testenv/accessapitest"
)

const (
	annotationDomain  = "credentials.cozystack.io"
	platformNamespace = "credo-system"
	// accessAPIUser is the identity the access API server delegates
	// authentication and authorization with: no system:masters, only the
	// bindings of config/apiservice.
	accessAPIUser = "credo-access-api"
)

var (
	// env is the control plane, with the credential-controller's
	// reconcilers running in-process, so that account Secrets are the
	// controller's own; its Logs hold every log line of the reconcilers
	// and the access API server.
	env      *testenv.Env
	keys     = account.NewKeys(annotationDomain)
	scheme   = newScheme()
	platform client.Client
	// accessAPIURL is the access API server's own address, which only
	// kube-apiserver should reach; accessAPICA the CA of its certificate.
	accessAPIURL string
	accessAPICA  []byte
)

func newScheme() *runtime.Scheme {
	s := controlplane.NewScheme()
	utilruntime.Must(accessv1.AddToScheme(s))
	return s
}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		ControlPlane:   controlplane.Options{Aggregation: true, Audit: true},
		ControllerName: credentials.ControllerName,
		ConfigureCache: credentials.ConfigureCache,
		Scheme:         scheme,
	}, setup))
}

// setup runs the CredentialAccount and AccountSource reconcilers (the
// takeover tests run AccountSources as the controller does) and the access
// API server, which reads CredentialAccounts from the manager's cache, as
// cmd/credential-controller wires an unsharded controller.
func setup(ctx context.Context, e *testenv.Env) error {
	env = e
	klog.SetLogger(ctrl.Log.WithName("access-api"))
	var err error
	if platform, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	if err := platform.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}}); err != nil {
		return fmt.Errorf("creating platform namespace: %w", err)
	}
	if err := credentials.Setup(ctx, env.Setup, credentials.Options{AnnotationDomain: annotationDomain, PlatformNamespace: platformNamespace}); err != nil {
		return err
	}
	direct, err := accessapi.NewClient(env.Config, scheme)
	if err != nil {
		return fmt.Errorf("creating the operations client: %w", err)
	}
	accounts := env.Setup.Manager.GetCache()
	srv, err := accessapitest.StartAccessAPI(ctx, env.Environment, accessAPIUser,
		&accessapi.Operations{Client: direct, AccountReader: accounts, NamespaceAccounts: accounts, Keys: keys})
	if err != nil {
		return err
	}
	accessAPIURL, accessAPICA = srv.URL, srv.CA
	return nil
}
