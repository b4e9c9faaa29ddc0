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
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testlog"
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
	env *controlplane.Environment
	// logs holds every log line of the reconcilers and the access API server.
	logs     testlog.Buffer
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
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var sink io.Writer = &logs
	if os.Getenv("CREDO_TEST_LOG") != "" {
		sink = io.MultiWriter(&logs, os.Stderr)
	}
	log := zap.New(zap.WriteTo(sink), zap.UseDevMode(true), zap.Level(zapcore.Level(-5)))
	ctrl.SetLogger(log)
	klog.SetLogger(log.WithName("access-api"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 5*time.Minute)
	var err error
	env, err = controlplane.Start(startCtx, controlplane.Options{Aggregation: true, Audit: true})
	startCancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer env.Stop()
	if platform, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintf(os.Stderr, "creating client: %v\n", err)
		return 1
	}
	if err := platform.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}}); err != nil {
		fmt.Fprintf(os.Stderr, "creating platform namespace: %v\n", err)
		return 1
	}
	accounts, err := startCredentialController(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	if err := startAccessAPI(ctx, accounts); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	return m.Run()
}

// startCredentialController runs the CredentialAccountReconciler, so that
// account Secrets are the controller's own, and the AccountSourceReconciler. It returns the manager's cache,
// which the access API reads CredentialAccounts from, as in
// cmd/credential-controller.
func startCredentialController(ctx context.Context) (client.Reader, error) {
	s, err := testenv.NewSetup(env.Config, scheme, credentials.ControllerName, credentials.ConfigureCache)
	if err != nil {
		return nil, err
	}
	// AccountSources derive accounts from the values tenants edit: the
	// takeover tests run them as the controller does.
	if err := credentials.Setup(ctx, s, credentials.Options{AnnotationDomain: annotationDomain, PlatformNamespace: platformNamespace}); err != nil {
		return nil, err
	}
	mgr := s.Manager
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
	}()
	return mgr.GetCache(), nil
}

// startAccessAPI serves the access API in-process on a free loopback port
// and registers it with kube-apiserver through an ExternalName Service.
func startAccessAPI(ctx context.Context, accounts client.Reader) error {
	kubeconfig, err := env.WriteKubeconfig(accessAPIUser, nil, "access-api.kubeconfig")
	if err != nil {
		return err
	}
	if err := accessapi.GrantDelegatedAuth(ctx, env.Config, accessAPIUser,
		rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: accessAPIUser}); err != nil {
		return err
	}
	direct, err := accessapi.NewClient(env.Config, scheme)
	if err != nil {
		return fmt.Errorf("creating the operations client: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	opts := accessapi.NewOptions()
	opts.Listener = ln
	opts.Kubeconfig = kubeconfig
	opts.CertDir = env.Dir + "/access-api-certs"
	// As cmd/credential-controller wires an unsharded controller.
	srv, err := accessapi.New(opts, &accessapi.Operations{Client: direct, AccountReader: accounts, NamespaceAccounts: accounts, Keys: keys})
	if err != nil {
		return fmt.Errorf("creating the access API server: %w", err)
	}
	accessAPIURL, accessAPICA = "https://"+ln.Addr().String(), srv.CABundle()
	go func() {
		if err := srv.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "access API server: %v\n", err)
		}
	}()
	regCtx, regCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer regCancel()
	if err := accessapi.Register(regCtx, env.Config, accessapi.Registration{
		Port:     int32(ln.Addr().(*net.TCPAddr).Port),
		CABundle: srv.CABundle(),
	}); err != nil {
		return fmt.Errorf("registering the access API: %w", err)
	}
	return nil
}
