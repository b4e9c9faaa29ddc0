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

// Command trust-controller projects the CA certificates of managed engines
// into key-free <release>.tenant-ca Secrets and records them in TrustAnchors.
package main

import (
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/metrics"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/controllers"
	"github.com/credo-dev/credo/internal/manager"
)

const controllerName = "trust-controller"

func main() {
	var (
		opts              manager.Options
		labelDomain       string
		namespaceSelector string
		expiryWindow      time.Duration
		concurrent        int
	)
	opts.BindFlags(pflag.CommandLine)
	pflag.StringVar(&labelDomain, "label-domain", "internal.cozystack.io",
		"The domain of the contract labels: <domain>/publish-ca-cert, <domain>/publish-ca-cert-release, <domain>/publish-ca-cert-key, <domain>/tenant-ca.")
	pflag.StringVar(&namespaceSelector, "namespace-selector", "",
		"A label selector (e.g. 'tenant=true') limiting the namespaces served; empty serves all.")
	pflag.DurationVar(&expiryWindow, "expiry-warning-window", 30*24*time.Hour,
		"A projected certificate expiring within this window is reported as ExpiringSoon.")
	pflag.IntVar(&concurrent, "concurrent", 4, "The number of releases reconciled concurrently.")
	pflag.Parse()

	nsSelector, err := labels.Parse(namespaceSelector)
	if err != nil {
		fail(err, "invalid --namespace-selector")
	}
	shard, err := opts.Shard()
	if err != nil {
		fail(err, "invalid --watch-label-selector")
	}
	setup, err := manager.New(controllerName, newScheme(), opts, func(o *ctrl.Options) {
		// Managed fields are never needed from the cache. Secrets are cached
		// as metadata only (the reconciler reads typed Secrets through the
		// API reader), so no Secret data sits in the controller's memory.
		// HelmReleases and TrustAnchors are cached for the shard only.
		o.Cache = cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject:         shard.ByObject(controllers.TrustShardedObjects()...),
		}
	})
	if err != nil {
		fail(err, "unable to set up manager")
	}
	mgr := setup.Manager
	recorder := metrics.NewRecorder()
	crmetrics.Registry.MustRegister(recorder.Collectors()...)

	ctx := ctrl.SetupSignalHandler()
	r := &controllers.TrustAnchorReconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		EventRecorder:       setup.Recorder,
		Metrics:             fluxcontroller.NewMetrics(mgr, recorder),
		Keys:                controllers.NewLabelKeys(labelDomain),
		NamespaceSelector:   nsSelector,
		Shard:               shard,
		ExpiryWarningWindow: expiryWindow,
	}
	if err := r.SetupWithManager(ctx, mgr, controllers.TrustAnchorReconcilerOptions{MaxConcurrentReconciles: concurrent}); err != nil {
		fail(err, "unable to set up the TrustAnchor controller")
	}
	if err := (&controllers.TrustSourceReconciler{Client: mgr.GetClient(), Metrics: fluxcontroller.NewMetrics(mgr, recorder), Shard: shard}).SetupWithManager(mgr); err != nil {
		fail(err, "unable to set up the TrustSource controller")
	}
	ctrl.Log.Info("starting manager", "labelDomain", labelDomain)
	if err := mgr.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

func fail(err error, msg string) {
	ctrl.Log.WithName(controllerName).Error(err, msg)
	os.Exit(1)
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(helmv2.AddToScheme(scheme))
	utilruntime.Must(trustv1.AddToScheme(scheme))
	return scheme
}
