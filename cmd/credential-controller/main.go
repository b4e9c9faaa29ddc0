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

// Command credential-controller keeps the Secrets of CredentialAccounts:
// verifier-only, NotIssued until a mint, owned by the release. It also
// serves access.credo.dev, the aggregated API that mints and revokes, on
// every replica (only the reconcilers are leader-elected).
package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/manager"
)

func main() {
	var (
		opts       manager.Options
		credOpts   credentials.Options
		accessOpts = accessapi.NewOptions()
	)
	opts.BindFlags(pflag.CommandLine)
	credOpts.BindFlags(pflag.CommandLine)
	accessOpts.BindFlags(pflag.CommandLine)
	var servingOpts servingOptions
	pflag.StringVar(&servingOpts.secret, "access-api-serving-secret", "credo-access-serving-cert",
		"The Secret, in --access-api-service-namespace, holding the access API's self-signed serving certificate shared by all replicas; created when absent. Empty: use --access-api-cert-dir as given (e.g. mounted from cert-manager).")
	pflag.BoolVar(&servingOpts.injectCA, "access-api-inject-ca", true,
		"Keep the APIService's caBundle set to the CA of the shared serving certificate (disable when cert-manager's cainjector does it).")
	pflag.Parse()

	setup, err := manager.New(credentials.ControllerName, credentials.NewScheme(), opts, credentials.ConfigureCache)
	if err != nil {
		fail(err, "unable to set up manager")
	}
	ctx := ctrl.SetupSignalHandler()
	if err := credentials.Setup(ctx, setup, credOpts); err != nil {
		fail(err, "unable to set up the controllers")
	}
	if accessOpts.Enabled() {
		startAccessAPI(ctx, setup, accessOpts, servingOpts, credOpts.AnnotationDomain)
	}
	ctrl.Log.Info("starting manager")
	if err := setup.Manager.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

// startAccessAPI serves access.credo.dev on every replica, beside the
// manager: it needs no leader election, reads the account Secret uncached
// and writes it conditionally, so replicas never race to a wrong result.
// CredentialAccounts come from the manager's cache, which every replica
// runs.
func startAccessAPI(ctx context.Context, setup *manager.Setup, opts *accessapi.Options, serving servingOptions, annotationDomain string) {
	mgr := setup.Manager
	scheme := credentials.NewScheme()
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme))
	direct, err := accessapi.NewClient(mgr.GetConfig(), scheme)
	if err != nil {
		fail(err, "unable to create the access API's client")
	}
	if serving.secret != "" {
		useSharedServingCert(ctx, direct, opts, serving)
	}
	ops := &accessapi.Operations{
		Client:        direct,
		AccountReader: mgr.GetCache(),
		Keys:          account.NewKeys(annotationDomain),
		Events:        setup.Recorder,
	}
	if !setup.Shard.Sharded() {
		// The cache holds every account: the platform accounts of a
		// namespace are listed from it. A shard's cache holds its own.
		ops.NamespaceAccounts = mgr.GetCache()
	}
	go func() {
		if waitForDelegatedAuth(ctx, direct) != nil {
			return // stopping
		}
		srv, err := accessapi.New(opts, ops)
		if err != nil {
			fail(err, "unable to set up the access API server")
		}
		ctrl.Log.Info("starting the access API server", "address", opts.BindAddress.String(), "port", opts.SecurePort)
		if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
			fail(err, "the access API server stopped with an error")
		}
	}()
}

// waitForDelegatedAuth waits until the controller may read kube-apiserver's
// request-header configuration (ConfigMap kube-system/extension-apiserver-authentication),
// which the access API server needs to authenticate what kube-apiserver
// proxies to it. The binding that allows it comes with config/apiservice,
// which Flux applies (credo-access-api dependsOn credo) only once this
// Deployment is Ready: exiting would hold both back for good. The
// controllers run meanwhile; the APIService is not Available until the
// server serves, which its health check reports.
func waitForDelegatedAuth(ctx context.Context, c client.Client) error {
	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "extension-apiserver-authentication"}
	// Said at once, then every minute: a controller whose config/apiservice
	// was never applied keeps saying why the access API does not serve.
	var lastLog time.Time
	return wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		if !apierrors.IsForbidden(err) {
			return true, nil // allowed; any other error is the server's to report
		}
		if time.Since(lastLog) >= time.Minute {
			ctrl.Log.WithName(credentials.ControllerName).Info("waiting for the access API's delegated-auth bindings (config/apiservice)", "reason", err.Error())
			lastLog = time.Now()
		}
		return false, nil
	})
}

// servingOptions say where the access API's self-signed serving
// certificate is kept and whether the controller injects its CA.
type servingOptions struct {
	secret   string
	injectCA bool
}

// useSharedServingCert loads (or, first, creates) the serving certificate
// every replica shares, writes it where the server reads it, and keeps the
// APIService's caBundle set to its CA.
func useSharedServingCert(ctx context.Context, c client.Client, opts *accessapi.Options, serving servingOptions) {
	ns := opts.ServiceNamespace
	hosts := []string{
		opts.ServiceName + "." + ns + ".svc",
		opts.ServiceName + "." + ns + ".svc.cluster.local",
		"localhost",
	}
	sc, err := accessapi.EnsureServingCert(ctx, c, ns, serving.secret, hosts)
	if err != nil {
		fail(err, "unable to obtain the access API's serving certificate")
	}
	if opts.CertDir == "" {
		if opts.CertDir, err = os.MkdirTemp("", "credo-access-api-"); err != nil {
			fail(err, "unable to create the access API's certificate directory")
		}
	}
	if err := sc.WriteTo(opts.CertDir, opts.CertPairName); err != nil {
		fail(err, "unable to write the access API's serving certificate")
	}
	if !serving.injectCA {
		return
	}
	go func() {
		// The APIService may be applied after the controller starts, and
		// applied again (by hand, or by an applier that owns the field):
		// the caBundle is kept, not set once: checked every minute once set,
		// every 10 seconds while it cannot be (a check is one GET).
		log := ctrl.Log.WithName(credentials.ControllerName)
		for {
			interval := time.Minute
			if err := accessapi.InjectCABundle(ctx, c, sc.CAPEM); err != nil {
				log.Info("waiting to inject the access API's CA", "reason", err.Error())
				interval = 10 * time.Second
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
		}
	}()
}

func fail(err error, msg string) { manager.Exit(credentials.ControllerName, err, msg) }
