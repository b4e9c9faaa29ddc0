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

package enrollment

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/lookupauthz"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Defaults of Options.
const (
	DefaultFailedAttemptsBurst = 10
	DefaultFailedAttemptsEvery = 30 * time.Second
	// DefaultRenewalRetryWindow is how long after a renewal its request,
	// sent again byte for byte, gets the same certificate: longer than the
	// agent's backoff over a few minutes' outage, far shorter than a TTL.
	DefaultRenewalRetryWindow = 15 * time.Minute
)

// Flag names of the identity form, quoted in messages.
const (
	FlagIdentityScheme = "identity-scheme"
	FlagTrustDomain    = "trust-domain"
)

// Flag names of the lookup's review budget, quoted in messages.
const (
	FlagLookupReviewsPerSecond = "lookup-reviews-per-second"
	FlagLookupReviewsBurst     = "lookup-reviews-burst"
)

// Options configure the enrollment server: the install's identity form,
// the platform's limits, the failed-attempt budget and the budget of
// uncached token lookups.
//
//	opts := enrollment.NewOptions()
//	opts.BindFlags(pflag.CommandLine)
//	pflag.Parse()
//	if err := opts.Validate(); err != nil { ... }
//	srv, err := enrollment.New(mgr, authority, recorder, opts)
type Options struct {
	// Identity is how workload URIs are written, once per install (never
	// per policy: namespace admins write policies). The zero value is the
	// default form, credo://workload/<uuid>.
	Identity enrollapi.IdentityForm
	// Limits bound what any policy may ask for.
	Limits Limits
	// FailedAttemptsBurst is how many failed join token attempts one client
	// address may make with one token id at once; no limit when zero
	// (Validate refuses that for a flag).
	FailedAttemptsBurst int
	// FailedAttemptsEvery refills one attempt of the budget.
	FailedAttemptsEvery time.Duration
	// MaxBackdate bounds notBefore backdating; DefaultMaxBackdate when zero.
	MaxBackdate time.Duration
	// RenewalRetryWindow is how long after a certificate was issued the
	// request it was issued for, sent again, is answered with it (a retry
	// whose first answer was lost); zero accepts no retry.
	RenewalRetryWindow time.Duration
	// UnknownTokenTTL is how long a token id the API server had no
	// JoinToken for is answered from memory, without another lookup; none
	// is remembered when zero.
	UnknownTokenTTL time.Duration
	// UnknownTokenCacheSize bounds how many unknown ids are remembered.
	UnknownTokenCacheSize int
	// TokenLookupsPerSecond and TokenLookupsBurst budget the uncached
	// lookups of token ids the cache does not hold, across all callers;
	// no budget when TokenLookupsPerSecond is zero (Validate refuses that
	// for a flag).
	TokenLookupsPerSecond float64
	TokenLookupsBurst     int
	// LookupMaxAge is how long a lookup's answer may be used by the
	// relying service (its maxAgeSeconds).
	LookupMaxAge time.Duration
	// Lookups configure who may look up what: the decisions held and the
	// budget of reviews sent to kube-apiserver.
	Lookups lookupauthz.Options
	// TokenUseFlush is how often the join tokens' use counts are written;
	// DefaultTokenUseFlush when zero. Not a flag.
	TokenUseFlush time.Duration
	// Now returns the time; time.Now when nil. Not a flag.
	Now func() time.Time
	// Log never receives a token, CSR or certificate. Not a flag.
	Log logr.Logger
}

// NewOptions returns Options with the defaults.
func NewOptions() Options {
	return Options{
		Identity:            enrollapi.DefaultIdentityForm(),
		Limits:              DefaultLimits(),
		FailedAttemptsBurst: DefaultFailedAttemptsBurst,
		FailedAttemptsEvery: DefaultFailedAttemptsEvery,
		MaxBackdate:         DefaultMaxBackdate,
		RenewalRetryWindow:  DefaultRenewalRetryWindow,

		UnknownTokenTTL:       DefaultUnknownTokenTTL,
		UnknownTokenCacheSize: DefaultUnknownTokenCacheSize,
		TokenLookupsPerSecond: DefaultTokenLookupsPerSecond,
		TokenLookupsBurst:     DefaultTokenLookupsBurst,

		LookupMaxAge: DefaultLookupMaxAge,
		Lookups:      lookupauthz.NewOptions(),
	}
}

// BindFlags binds the options and the limits to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Identity.Scheme, FlagIdentityScheme, o.Identity.Scheme,
		"How workload URIs are written: "+enrollapi.SchemeCredo+" (credo://workload/<uuid>, or credo://<trust domain>/workload/<uuid> with --"+FlagTrustDomain+") or "+
			enrollapi.SchemeSPIFFE+" (the SPIFFE ID spiffe://<trust domain>/workload/<uuid>; needs --"+FlagTrustDomain+"). Set once per install: a change makes every agent renew into the new form.")
	fs.StringVar(&o.Identity.TrustDomain, FlagTrustDomain, o.Identity.TrustDomain,
		"The trust domain of workload URIs: lower-case letters, digits, '.', '-' and '_', at most 255 characters. Required with --"+FlagIdentityScheme+"="+enrollapi.SchemeSPIFFE+".")
	o.Limits.BindFlags(fs)
	fs.IntVar(&o.FailedAttemptsBurst, "failed-token-attempts-burst", o.FailedAttemptsBurst,
		"How many failed join token attempts one client address may make with one token id at once (attempts naming no existing token share one budget per address).")
	fs.DurationVar(&o.FailedAttemptsEvery, "failed-token-attempts-every", o.FailedAttemptsEvery,
		"After the burst, one failed attempt per this interval per client address and token id.")
	fs.DurationVar(&o.MaxBackdate, "max-backdate", o.MaxBackdate,
		"How far before now a certificate's notBefore may be set, for agents whose clock is behind (at most a twentieth of the TTL).")
	fs.DurationVar(&o.RenewalRetryWindow, "renewal-retry-window", o.RenewalRetryWindow,
		"How long after a certificate was issued the same certificate request, sent again because its answer was lost, gets that certificate again instead of counting as a duplicate identity; 0 accepts no retry.")
	fs.DurationVar(&o.UnknownTokenTTL, FlagUnknownTokenTTL, o.UnknownTokenTTL,
		"How long a join token id the API server had no JoinToken for is refused from memory, without another lookup; a token created meanwhile enrolls once the server's cache holds it, at the latest after this. 0 remembers none.")
	fs.IntVar(&o.UnknownTokenCacheSize, FlagUnknownTokenCacheSize, o.UnknownTokenCacheSize,
		"How many unknown join token ids are remembered at most (the least recently used are forgotten first).")
	fs.Float64Var(&o.TokenLookupsPerSecond, FlagTokenLookupsPerSecond, o.TokenLookupsPerSecond,
		"How many lookups per second of join token ids the server's cache does not hold (each a list on the API server) all clients together may cause on this replica; beyond it they are answered 429 TokenLookupsLimited with Retry-After. Tokens the cache holds are not limited.")
	fs.IntVar(&o.TokenLookupsBurst, FlagTokenLookupsBurst, o.TokenLookupsBurst,
		"How many such lookups may happen at once before --"+FlagTokenLookupsPerSecond+" applies.")
	fs.DurationVar(&o.LookupMaxAge, FlagLookupMaxAge, o.LookupMaxAge,
		"How long a relying service may use a lookup's answer (its maxAgeSeconds): a relabel or a deny reaches it within this plus the server's watch lag. At least 1s, at most "+MaxLookupMaxAge.String()+".")
	fs.Float64Var(&o.Lookups.ReviewsPerSecond, FlagLookupReviewsPerSecond, o.Lookups.ReviewsPerSecond,
		"How many authorization reviews (SubjectAccessReview, TokenReview) per second the lookups of all callers may cause on this replica; one caller may cause a tenth of it. Decisions held in memory (30s allowed, 10s denied) cost none; beyond the budget lookups are answered 429 LookupsLimited with Retry-After.")
	fs.IntVar(&o.Lookups.ReviewsBurst, FlagLookupReviewsBurst, o.Lookups.ReviewsBurst,
		"How many such reviews may happen at once before --"+FlagLookupReviewsPerSecond+" applies.")
}

// Validate checks the options as flags give them.
func (o *Options) Validate() error {
	var errs []error
	if err := o.Identity.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--%s=%s --%s=%s: %w", FlagIdentityScheme, o.Identity.Scheme, FlagTrustDomain, o.Identity.TrustDomain, err))
	}
	if err := o.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.FailedAttemptsBurst < 1 {
		errs = append(errs, errors.New("--failed-token-attempts-burst must be at least 1"))
	}
	if o.FailedAttemptsEvery <= 0 {
		errs = append(errs, errors.New("--failed-token-attempts-every must be positive"))
	}
	if o.MaxBackdate < 0 {
		errs = append(errs, errors.New("--max-backdate must not be negative"))
	}
	if o.RenewalRetryWindow < 0 {
		errs = append(errs, errors.New("--renewal-retry-window must not be negative"))
	}
	if o.UnknownTokenTTL < 0 {
		errs = append(errs, fmt.Errorf("--%s must not be negative", FlagUnknownTokenTTL))
	}
	if o.UnknownTokenTTL > 0 && o.UnknownTokenCacheSize < 1 {
		errs = append(errs, fmt.Errorf("--%s must be at least 1 while --%s is set", FlagUnknownTokenCacheSize, FlagUnknownTokenTTL))
	}
	if o.TokenLookupsPerSecond <= 0 || math.IsInf(o.TokenLookupsPerSecond, 0) || math.IsNaN(o.TokenLookupsPerSecond) {
		errs = append(errs, fmt.Errorf("--%s must be a positive number", FlagTokenLookupsPerSecond))
	}
	if o.TokenLookupsBurst < 1 {
		errs = append(errs, fmt.Errorf("--%s must be at least 1", FlagTokenLookupsBurst))
	}
	if o.LookupMaxAge < time.Second || o.LookupMaxAge > MaxLookupMaxAge {
		errs = append(errs, fmt.Errorf("--%s must be between 1s and %s", FlagLookupMaxAge, MaxLookupMaxAge))
	}
	if r := o.Lookups.ReviewsPerSecond; r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		errs = append(errs, fmt.Errorf("--%s must be a positive number", FlagLookupReviewsPerSecond))
	}
	if o.Lookups.ReviewsBurst < 1 {
		errs = append(errs, fmt.Errorf("--%s must be at least 1", FlagLookupReviewsBurst))
	}
	return errors.Join(errs...)
}

// Cluster is what the server reads and writes through: a controller-runtime
// manager is one.
type Cluster interface {
	// GetCache is the informer cache, with IndexFields registered.
	GetCache() cache.Cache
	// GetAPIReader reads from the API server, uncached.
	GetAPIReader() client.Reader
	// GetClient writes.
	GetClient() client.Client
}

// New builds the enrollment server on c: policies, tokens and workloads are
// looked up in c's cache (IndexFields must be registered before it starts),
// what the cache may not hold yet and what a conditional write depends on
// is read from the API server, and writes go through c's client. Both
// cmd/enrollment-controller and the tests build the server here.
func New(c Cluster, authority ca.CertificateAuthority, recorder events.Recorder, opts Options) (*Server, error) {
	if authority == nil {
		return nil, errors.New("the enrollment server needs a certificate authority")
	}
	if opts.FailedAttemptsBurst < 0 || (opts.FailedAttemptsBurst > 0 && opts.FailedAttemptsEvery <= 0) {
		return nil, fmt.Errorf("failed attempts: burst %d every %s is not a budget", opts.FailedAttemptsBurst, opts.FailedAttemptsEvery)
	}
	if err := opts.Limits.Validate(); err != nil {
		return nil, err
	}
	if err := opts.Identity.Validate(); err != nil {
		return nil, fmt.Errorf("identity form: %w", err)
	}
	if opts.TokenLookupsPerSecond < 0 || (opts.TokenLookupsPerSecond > 0 && opts.TokenLookupsBurst < 1) {
		return nil, fmt.Errorf("token lookups: %g per second, burst %d is not a budget", opts.TokenLookupsPerSecond, opts.TokenLookupsBurst)
	}
	s := &Server{
		Reader:       c.GetCache(),
		APIReader:    c.GetAPIReader(),
		Client:       c.GetClient(),
		CA:           authority,
		Form:         opts.Identity,
		Recorder:     recorder,
		Limits:       opts.Limits,
		MaxBackdate:  opts.MaxBackdate,
		RetryWindow:  opts.RenewalRetryWindow,
		Now:          opts.Now,
		Log:          opts.Log,
		LookupMaxAge: opts.LookupMaxAge,
		refusals:     newSampledLog(),
		useFlush:     opts.TokenUseFlush,
	}
	if opts.FailedAttemptsBurst > 0 {
		s.Limiter = NewFailureLimiter(opts.FailedAttemptsEvery, opts.FailedAttemptsBurst)
	}
	s.unknown = newUnknownTokens(opts.UnknownTokenTTL, opts.UnknownTokenCacheSize, s.now)
	s.lookups = newLookupBudget(opts.TokenLookupsPerSecond, opts.TokenLookupsBurst)
	if s.LookupMaxAge <= 0 {
		s.LookupMaxAge = DefaultLookupMaxAge
	}
	lookupOpts := opts.Lookups
	if lookupOpts.ReviewsPerSecond == 0 {
		// Options built by hand, not by NewOptions.
		lookupOpts = lookupauthz.NewOptions()
	}
	if lookupOpts.Now == nil {
		lookupOpts.Now = s.now
	}
	reviews, err := lookupauthz.New(c.GetClient(), lookupOpts)
	if err != nil {
		return nil, err
	}
	s.Reviews = reviews
	return s, nil
}
