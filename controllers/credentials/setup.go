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
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/spf13/pflag"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/exposure"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/intern"
	"github.com/credo-dev/credo/internal/manager"
	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/shard"
)

// ControllerName is the credential-controller's one name
// (fieldowner.CredentialController): its field manager, user agent,
// events' reporting controller and leader election lease.
const ControllerName = fieldowner.CredentialController

// Options configure the credential-controller's reconcilers.
type Options struct {
	// AnnotationDomain is the domain of the account Secret annotations.
	AnnotationDomain string
	// PlatformNamespace keeps the passwords of platform accounts.
	PlatformNamespace string
	// SweepInterval is how often every account Secret and kept password is
	// checked for a deleted account, namespace or release (sweep.go);
	// DefaultSweepInterval when zero.
	SweepInterval time.Duration
	// PlatformSourceNamespaces are the namespaces, where no tenant may
	// write Flux sources, in which an AccountSource's chartRef without a
	// namespace looks for its source (internal/release.Rule).
	PlatformSourceNamespaces []string
	// MaxAccountsPerRelease bounds the accounts one AccountSource generates
	// for one release (Limits.PerRelease); DefaultMaxAccountsPerRelease
	// when zero, no limit when negative.
	MaxAccountsPerRelease int
	// MaxAccountsPerNamespace bounds the generated accounts of a namespace
	// (Limits.PerNamespace); DefaultMaxAccountsPerNamespace when zero, no
	// limit when negative.
	MaxAccountsPerNamespace int
	// MaxPlatformAccountsPerNamespace bounds the platform accounts, and so
	// the kept passwords, of a namespace that AccountSources generate to
	// (Limits.PlatformPerNamespace); DefaultMaxPlatformAccountsPerNamespace
	// when zero, no limit when negative.
	MaxPlatformAccountsPerNamespace int
	// ValuesFromOwnerSelector is a label selector of the HelmReleases whose
	// spec.valuesFrom another writer owns (the platform's apps API and
	// application definitions set the whole list): credo never edits it
	// and reports the entry the owner must list (ValuesFromMissing).
	// Empty selects none.
	ValuesFromOwnerSelector string
	// PlaintextTrustedSubjects may read a platform account's plaintext
	// besides its consumers and Kubernetes' own components
	// ("user:<name>", "group:<name>", "serviceaccount:<namespace>:<name>");
	// DefaultPlaintextTrustedSubjects of PlatformNamespace when nil.
	PlaintextTrustedSubjects []string
}

// DefaultPlaintextTrustedSubjects are the platform's identities that may
// read every Secret anyway: credo's own ServiceAccounts (in the platform
// namespace) and Flux's controllers. A tenant who may create a HelmRelease
// or Kustomization that Flux renders with its own rights is found on the
// tenant's side (the access it holds in the namespace).
func DefaultPlaintextTrustedSubjects(platformNamespace string) []string {
	return []string{"group:system:serviceaccounts:" + platformNamespace, "group:system:serviceaccounts:flux-system"}
}

// DefaultValuesFromOwnerSelector selects the releases of cozystack's apps
// API, which labels every application's HelmRelease so and rebuilds it,
// valuesFrom included, on every edit of the application. It selects
// nothing on a cluster without the platform.
const DefaultValuesFromOwnerSelector = "apps.cozystack.io/application.group=apps.cozystack.io"

// BindFlags binds the options to fs with their defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.AnnotationDomain, "annotation-domain", "credentials.cozystack.io",
		"The domain of the account Secret annotations <domain>/origin and <domain>/history.")
	fs.StringVar(&o.PlatformNamespace, "platform-namespace", "credo-system",
		"The namespace, readable by no tenant, where the passwords of platform accounts are kept.")
	fs.DurationVar(&o.SweepInterval, "sweep-interval", DefaultSweepInterval,
		"How often account Secrets and kept platform passwords are checked for a deleted account, tenant namespace or HelmRelease (also at start-up).")
	release.BindSourceNamespaces(fs, &o.PlatformSourceNamespaces)
	fs.IntVar(&o.MaxAccountsPerRelease, "max-generated-accounts-per-release", DefaultMaxAccountsPerRelease,
		"The most accounts one AccountSource generates for one release; a release that derives more gets none of its changes (AccountLimitExceeded). Negative: no limit.")
	fs.IntVar(&o.MaxAccountsPerNamespace, "max-generated-accounts-per-namespace", DefaultMaxAccountsPerNamespace,
		"The most generated accounts a namespace may have; a release whose new accounts would exceed it gets none of them (AccountLimitExceeded). Negative: no limit.")
	fs.IntVar(&o.MaxPlatformAccountsPerNamespace, "max-platform-accounts-per-namespace", DefaultMaxPlatformAccountsPerNamespace,
		"The most platform accounts (each a password kept in --platform-namespace) a namespace may have before AccountSources generate no more (AccountLimitExceeded). Negative: no limit.")
	fs.StringVar(&o.ValuesFromOwnerSelector, "values-from-owner-selector", DefaultValuesFromOwnerSelector,
		"A label selector of the HelmReleases whose spec.valuesFrom another writer owns (the platform's application definitions): credo never edits their list and reports the entry it must list (ValuesFromMissing). Empty: none; credo then adds its entries to every release not applied from Git.")
	fs.StringSliceVar(&o.PlaintextTrustedSubjects, "plaintext-trusted-subjects", nil,
		"Who, besides an account's consumers and Kubernetes' own components, may be able to read a platform account's plaintext without it counting as exposed (PlaintextExposed): user:<name>, group:<name> or serviceaccount:<namespace>:<name>. Default: the ServiceAccounts of --platform-namespace and of flux-system.")
}

// plaintextTrusted parses PlaintextTrustedSubjects.
func (o Options) plaintextTrusted() ([]rbacv1.Subject, error) {
	list := o.PlaintextTrustedSubjects
	if list == nil {
		list = DefaultPlaintextTrustedSubjects(o.PlatformNamespace)
	}
	out := make([]rbacv1.Subject, 0, len(list))
	for _, s := range list {
		sub, err := exposure.ParseSubject(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--plaintext-trusted-subjects: %w", err)
		}
		out = append(out, sub)
	}
	return out, nil
}

// valuesFromOwners parses ValuesFromOwnerSelector; empty selects nothing
// (labels.Parse would select everything).
func (o Options) valuesFromOwners() (labels.Selector, error) {
	if strings.TrimSpace(o.ValuesFromOwnerSelector) == "" {
		return labels.Nothing(), nil
	}
	sel, err := labels.Parse(o.ValuesFromOwnerSelector)
	if err != nil {
		return nil, fmt.Errorf("parsing --values-from-owner-selector: %w", err)
	}
	return sel, nil
}

// limits are the AccountSources' limits the options set.
func (o Options) limits() Limits {
	return Limits{
		PerRelease:           limitOrDefault(o.MaxAccountsPerRelease, DefaultMaxAccountsPerRelease),
		PerNamespace:         limitOrDefault(o.MaxAccountsPerNamespace, DefaultMaxAccountsPerNamespace),
		PlatformPerNamespace: limitOrDefault(o.MaxPlatformAccountsPerNamespace, DefaultMaxPlatformAccountsPerNamespace),
	}
}

// NewScheme returns the kinds the credential-controller reads and writes;
// the access API mints join tokens of EnrollmentPolicies.
func NewScheme() *runtime.Scheme {
	return manager.NewScheme(helmv2.AddToScheme, sourcev1.AddToScheme, credv1.AddToScheme, enrollv1.AddToScheme)
}

// ConfigureCache sets the credential-controller's cache options for its
// shard. Secrets are cached as metadata only; the reconciler reads typed
// Secrets through the API reader, so no password sits in the cache.
// HelmReleases and CredentialAccounts are cached for the shard only; the
// access API reads an account of another shard uncached. HelmReleases are
// cached without spec.values (ReleaseCacheTransform).
func ConfigureCache(o *ctrl.Options, s shard.Shard) {
	o.Cache = cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         release.WithCacheTransform(s.ByObject(ShardedObjects()...), ReleaseCacheTransform()),
	}
	intern.Cache(&o.Cache)
}

// Setup registers the CredentialAccount and AccountSource reconcilers with
// the manager: cmd/credential-controller and the tests build them here
// alike.
func Setup(ctx context.Context, s *manager.Setup, o Options) error {
	mgr := s.Manager
	owners, err := o.valuesFromOwners()
	if err != nil {
		return err
	}
	trusted, err := o.plaintextTrusted()
	if err != nil {
		return err
	}
	accounts := &CredentialAccountReconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		EventRecorder:     s.Recorder,
		Metrics:           fluxcontroller.NewMetrics(mgr, s.Metrics),
		AccountKeys:       NewAccountKeys(o.AnnotationDomain),
		PlatformNamespace: o.PlatformNamespace,
		Shard:             s.Shard,
		ValuesFromOwners:  owners,
		Exposure:          exposure.New(mgr.GetAPIReader(), mgr.GetClient(), trusted),
	}
	if err := accounts.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the CredentialAccount controller: %w", err)
	}
	interval := o.SweepInterval
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	if err := mgr.Add(sweepLoop{r: accounts, interval: interval}); err != nil {
		return fmt.Errorf("setting up the sweep: %w", err)
	}
	sources := &AccountSourceReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Metrics: fluxcontroller.NewMetrics(mgr, s.Metrics), Shard: s.Shard,
		SourceNamespaces: o.PlatformSourceNamespaces,
		Limits:           o.limits(),
		Notices:          &release.Notices{Recorder: s.Recorder, Action: eventActionAccount},
	}
	if err := sources.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the AccountSource controller: %w", err)
	}
	return nil
}
