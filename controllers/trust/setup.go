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
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/intern"
	"github.com/credo-dev/credo/internal/manager"
	"github.com/credo-dev/credo/internal/projection"
	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/internal/sourcecache"
)

// ControllerName is the trust-controller's one name
// (fieldowner.TrustController): its field manager, user agent, events'
// reporting controller and leader election lease.
const ControllerName = fieldowner.TrustController

// Options configure the trust-controller's reconcilers.
type Options struct {
	// LabelDomain is the domain of the contract labels.
	LabelDomain string
	// NamespaceSelector limits the namespaces served; empty serves all.
	NamespaceSelector string
	// ExpiryWarningWindow makes a certificate expiring within it ExpiringSoon.
	ExpiryWarningWindow time.Duration
	// Concurrent is the number of releases reconciled concurrently.
	Concurrent int
	// PlatformSourceNamespaces are the namespaces, where no tenant may
	// write Flux sources, in which a TrustSource's chartRef without a
	// namespace looks for its source (internal/release.Rule).
	PlatformSourceNamespaces []string
	// TenantProjections says who writes the projections of releases a
	// TenantProjection of the platform claims: platform (its controller;
	// the default) or credo (TenantProjectionMode).
	TenantProjections string
}

// DefaultConcurrent is --concurrent's default: the releases reconciled at
// once (docs/benchmarks.md: from 8 on, two cores are full).
const DefaultConcurrent = 8

// BindFlags binds the options to fs with their defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.LabelDomain, "label-domain", "internal.cozystack.io",
		"The domain of the contract labels: <domain>/publish-ca-cert, <domain>/publish-ca-cert-release, <domain>/publish-ca-cert-key, <domain>/tenant-ca.")
	fs.StringVar(&o.NamespaceSelector, "namespace-selector", "",
		"A label selector (e.g. 'tenant=true') limiting the namespaces served; empty serves all.")
	fs.DurationVar(&o.ExpiryWarningWindow, "expiry-warning-window", 30*24*time.Hour,
		"A projected certificate expiring within this window is reported as ExpiringSoon.")
	// 8: on two cores, 1,000 releases cold start in about 16 s and a fan-out
	// of 1,000 rotations in about 10 s, against 27-32 s and 19-22 s with 4
	// (each reconcile waits on a few round trips in a row); 16 gains
	// nothing more once the API server's CPU is the bound (BenchmarkTrustAnchor).
	fs.IntVar(&o.Concurrent, "concurrent", DefaultConcurrent, "The number of releases reconciled concurrently.")
	release.BindSourceNamespaces(fs, &o.PlatformSourceNamespaces)
	fs.StringVar(&o.TenantProjections, "tenant-projections", string(TenantProjectionsPlatform),
		"Who writes <release>.tenant-ca for releases a TenantProjection (internal.cozystack.io) claims: "+
			"'platform' (the platform's TenantProjection controller; credo records its projections and hands it any it wrote) or "+
			"'credo' (credo projects them and takes the platform's over in place: set it only once the platform's controller is stopped).")
}

// NewScheme returns the kinds the trust-controller reads and writes.
func NewScheme() *runtime.Scheme {
	return manager.NewScheme(helmv2.AddToScheme, sourcev1.AddToScheme, trustv1.AddToScheme)
}

// ConfigureCache sets the trust-controller's cache options for its shard.
// Managed fields are not needed from the cache, but for the managers of
// projections' (projection.CacheTransform): with them and the digest a
// projection carries, the writer tells from the cache whether a projection
// is current and its own, and reads no projection. Secrets are cached here
// as metadata only, without kubectl's last-applied-configuration (which
// holds a Secret's data); the certificates of label-leg sources are cached
// apart (internal/sourcecache, built by Setup), and no other Secret data
// sits in the controller's memory. HelmReleases and TrustAnchors are cached
// for the shard only; of a HelmRelease, only what the controller reads
// (ReleaseCacheTransform): never a tenant's spec.values.
func ConfigureCache(o *ctrl.Options, s shard.Shard) {
	byObject := release.WithCacheTransform(s.ByObject(ShardedObjects()...), ReleaseCacheTransform())
	byObject[&corev1.Secret{}] = cache.ByObject{Transform: projection.CacheTransform()}
	o.Cache = cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         byObject,
	}
	intern.Cache(&o.Cache)
}

// Setup registers the TrustAnchor and TrustSource reconcilers with the
// manager: cmd/trust-controller and the tests build them here alike.
func Setup(ctx context.Context, s *manager.Setup, o Options) error {
	nsSelector, err := labels.Parse(o.NamespaceSelector)
	if err != nil {
		return fmt.Errorf("invalid --namespace-selector: %w", err)
	}
	mode, err := ParseTenantProjectionMode(o.TenantProjections)
	if err != nil {
		return err
	}
	mgr := s.Manager
	keys := trustv1.NewContractKeys(o.LabelDomain)
	sources, err := sourcecache.New(mgr, keys)
	if err != nil {
		return err
	}
	anchors := &TrustAnchorReconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		EventRecorder:       s.Recorder,
		Metrics:             fluxcontroller.NewMetrics(mgr, s.Metrics),
		Sources:             sources,
		Keys:                keys,
		NamespaceSelector:   nsSelector,
		Shard:               s.Shard,
		ExpiryWarningWindow: o.ExpiryWarningWindow,
		SourceNamespaces:    o.PlatformSourceNamespaces,
		Notices:             &release.Notices{Recorder: s.Recorder, Action: eventActionProject},
		TenantProjections:   mode,
	}
	if err := anchors.SetupWithManager(ctx, mgr, TrustAnchorReconcilerOptions{MaxConcurrentReconciles: o.Concurrent}); err != nil {
		return fmt.Errorf("setting up the TrustAnchor controller: %w", err)
	}
	rules := &TrustSourceReconciler{Client: mgr.GetClient(), EventRecorder: s.Recorder, Metrics: fluxcontroller.NewMetrics(mgr, s.Metrics), Shard: s.Shard,
		SourceNamespaces: o.PlatformSourceNamespaces}
	if err := rules.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the TrustSource controller: %w", err)
	}
	return nil
}
