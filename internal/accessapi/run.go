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

package accessapi

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/manager"
)

// AddToManager serves access.credo.dev beside setup's manager, on every
// replica: it needs no leader election, reads the account Secret uncached
// and writes it conditionally, so replicas never race to a wrong result.
// CredentialAccounts come from the manager's cache, which every replica
// runs. scheme holds the kinds the operations read and write, and
// apiregistration's (the APIService's caBundle). The shared serving
// certificate is obtained now, so that a controller that cannot have one
// fails at start.
func AddToManager(ctx context.Context, setup *manager.Setup, scheme *runtime.Scheme, opts *Options, keys account.Keys) error {
	mgr := setup.Manager
	ready := NewReadiness()
	if err := mgr.AddReadyzCheck("access-api", ready.Check); err != nil {
		return fmt.Errorf("adding the access API's readiness check: %w", err)
	}
	direct, err := NewClient(mgr.GetConfig(), scheme)
	if err != nil {
		return fmt.Errorf("creating the access API's client: %w", err)
	}
	if opts.ServingSecret != "" {
		if err := useSharedServingCert(ctx, direct, opts); err != nil {
			return err
		}
	}
	ops := &Operations{Client: direct, AccountReader: mgr.GetCache(), Keys: keys, Events: setup.Recorder}
	if !setup.Shard.Sharded() {
		// The cache holds every account: the platform accounts of a
		// namespace are listed from it. A shard's cache holds its own.
		ops.NamespaceAccounts = mgr.GetCache()
	}
	return mgr.Add(manager.EveryReplica(func(ctx context.Context) error {
		if waitForDelegatedAuth(ctx, direct) != nil {
			return nil // stopping
		}
		srv, err := New(opts, ops)
		if err != nil {
			return fmt.Errorf("setting up the access API server: %w", err)
		}
		ready.starting(srv.Address())
		ctrl.LoggerFrom(ctx).Info("starting the access API server", "address", opts.BindAddress.String(), "port", opts.SecurePort)
		if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("the access API server stopped: %w", err)
		}
		return nil
	}))
}

// waitForDelegatedAuth waits until the controller may read kube-apiserver's
// request-header configuration (ConfigMap kube-system/extension-apiserver-authentication),
// which the access API server needs to authenticate what kube-apiserver
// proxies to it. The binding that allows it comes with config/apiservice,
// which Flux applies (credo-access-api dependsOn credo) only once the
// controller's Deployment is Ready: exiting would hold both back for good.
// The controllers run meanwhile; the APIService is not Available until the
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
			ctrl.LoggerFrom(ctx).Info("waiting for the access API's delegated-auth bindings (config/apiservice)", "reason", err.Error())
			lastLog = time.Now()
		}
		return false, nil
	})
}

// useSharedServingCert loads (or, first, creates) the serving certificate
// every replica shares, writes it where the server reads it, and keeps the
// APIService's caBundle set to its CA.
func useSharedServingCert(ctx context.Context, c client.Client, opts *Options) error {
	ns := opts.ServiceNamespace
	hosts := []string{
		opts.ServiceName + "." + ns + ".svc",
		opts.ServiceName + "." + ns + ".svc.cluster.local",
		"localhost",
	}
	sc, err := EnsureServingCert(ctx, c, ns, opts.ServingSecret, hosts)
	if err != nil {
		return fmt.Errorf("obtaining the access API's serving certificate: %w", err)
	}
	if opts.CertDir == "" {
		if opts.CertDir, err = os.MkdirTemp("", "credo-access-api-"); err != nil {
			return fmt.Errorf("creating the access API's certificate directory: %w", err)
		}
	}
	if err := sc.WriteTo(opts.CertDir, opts.CertPairName); err != nil {
		return fmt.Errorf("writing the access API's serving certificate: %w", err)
	}
	if opts.InjectCA {
		go keepCABundle(ctx, c, sc.CAPEM)
	}
	return nil
}

// keepCABundle keeps the APIService's caBundle set to caPEM. The
// APIService may be applied after the controller starts, and applied again
// (by hand, or by an applier that owns the field): the caBundle is kept,
// not set once: checked every minute once set, every 10 seconds while it
// cannot be (a check is one GET).
func keepCABundle(ctx context.Context, c client.Client, caPEM []byte) {
	log := ctrl.LoggerFrom(ctx)
	for {
		interval := time.Minute
		if err := InjectCABundle(ctx, c, caPEM); err != nil {
			log.Info("waiting to inject the access API's CA", "reason", err.Error())
			interval = 10 * time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
