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

// Package lookupauthz decides who may look up a workload in the registry:
// a Kubernetes SubjectAccessReview for the verb lookup on the workload, and
// a TokenReview for a caller presenting a Kubernetes token. Both are asked
// of kube-apiserver, so RBAC (and whatever authorizer the cluster runs)
// decides; the decisions are held in memory for a short while and the
// reviews sent are budgeted, so that relying services cannot load
// kube-apiserver through the enrollment listener.
package lookupauthz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Defaults of Options.
const (
	// DefaultAllowedTTL is how long an allowed decision is held: a
	// RoleBinding removed stops authorizing lookups within it.
	DefaultAllowedTTL = 30 * time.Second
	// DefaultDeniedTTL is how long a denied decision is held: a
	// RoleBinding added starts authorizing within it.
	DefaultDeniedTTL = 10 * time.Second
	// DefaultTokenTTL is how long a token's review is held, whatever it
	// said: a deleted ServiceAccount's token stops within it.
	DefaultTokenTTL = 10 * time.Second
	// DefaultCacheSize bounds the decisions and the token reviews held,
	// each: at a few hundred bytes an entry, a few megabytes.
	DefaultCacheSize = 16384
	// DefaultReviewsPerSecond and DefaultReviewsBurst budget the reviews
	// of all callers together.
	DefaultReviewsPerSecond = 50
	DefaultReviewsBurst     = 100
	// callerShare is the part of the budget one caller may spend: no
	// caller starves the others.
	callerShare = 10
)

// Workload subjects: how a caller authenticated by its workload
// certificate is named in a SubjectAccessReview, so that RBAC bindings can
// name one workload, a namespace's workloads, or a policy's.
const (
	// GroupWorkloads holds every workload.
	GroupWorkloads = "credo:workloads"
	userPrefix     = "credo:workload:"
	policyPrefix   = "credo:policy:"
)

// Subject is who asks: a workload, or the user of a Kubernetes token.
type Subject struct {
	User   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// WorkloadSubject is the subject of a workload caller: the user
// credo:workload:<namespace>:<uuid>, in the groups credo:workloads,
// credo:workloads:<namespace> and credo:policy:<namespace>:<policy>.
func WorkloadSubject(w *enrollv1.Workload) Subject {
	return Subject{
		User: userPrefix + w.Namespace + ":" + w.Name,
		UID:  string(w.UID),
		Groups: []string{
			GroupWorkloads,
			GroupWorkloads + ":" + w.Namespace,
			policyPrefix + w.Namespace + ":" + w.Spec.Policy,
		},
	}
}

// key identifies the subject in the decision cache: every field a review
// is judged by.
func (s Subject) key() string {
	var b strings.Builder
	b.WriteString(s.User)
	b.WriteByte(0)
	b.WriteString(s.UID)
	groups := slices.Clone(s.Groups)
	sort.Strings(groups)
	for _, g := range groups {
		b.WriteByte(0)
		b.WriteString(g)
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(1)
		b.WriteString(k)
		for _, v := range s.Extra[k] {
			b.WriteByte(0)
			b.WriteString(v)
		}
	}
	return b.String()
}

// Limited is returned when a review was needed and the budget is spent;
// nothing was decided. RetryAfter is in seconds.
type Limited struct {
	RetryAfter int
	// Caller is true when the caller's own share is spent, false when the
	// budget of all callers is.
	Caller bool
}

func (l *Limited) Error() string {
	who := "all callers together"
	if l.Caller {
		who = "this caller"
	}
	return fmt.Sprintf("%s asked for more authorization reviews than the enrollment server makes; retry in %d s", who, l.RetryAfter)
}

// Options configure a Reviewer.
type Options struct {
	AllowedTTL, DeniedTTL, TokenTTL time.Duration
	CacheSize                       int
	// ReviewsPerSecond and ReviewsBurst budget the reviews of all
	// callers; each caller may spend a tenth of it.
	ReviewsPerSecond float64
	ReviewsBurst     int
	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

// NewOptions returns the defaults.
func NewOptions() Options {
	return Options{
		AllowedTTL: DefaultAllowedTTL, DeniedTTL: DefaultDeniedTTL, TokenTTL: DefaultTokenTTL,
		CacheSize: DefaultCacheSize, ReviewsPerSecond: DefaultReviewsPerSecond, ReviewsBurst: DefaultReviewsBurst,
	}
}

// Reviewer asks kube-apiserver who may look up what, through a client
// that creates SubjectAccessReviews and TokenReviews. Build it with New.
type Reviewer struct {
	c    client.Client
	opts Options
	now  func() time.Time

	decisions *utilcache.LRUExpireCache
	tokens    *utilcache.LRUExpireCache

	mu      sync.Mutex
	all     *rate.Limiter
	callers map[string]*callerBudget
	swept   time.Time
}

type callerBudget struct {
	lim  *rate.Limiter
	seen time.Time
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// New returns a Reviewer sending its reviews through c.
func New(c client.Client, opts Options) (*Reviewer, error) {
	if opts.AllowedTTL <= 0 || opts.DeniedTTL <= 0 || opts.TokenTTL <= 0 || opts.CacheSize < 1 {
		return nil, errors.New("lookup reviews: the decision cache needs positive lifetimes and size")
	}
	if opts.ReviewsPerSecond <= 0 || math.IsInf(opts.ReviewsPerSecond, 0) || math.IsNaN(opts.ReviewsPerSecond) || opts.ReviewsBurst < 1 {
		return nil, fmt.Errorf("lookup reviews: %g per second, burst %d is not a budget", opts.ReviewsPerSecond, opts.ReviewsBurst)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Reviewer{
		c: c, opts: opts, now: now,
		decisions: utilcache.NewLRUExpireCacheWithClock(opts.CacheSize, clockFunc(now)),
		tokens:    utilcache.NewLRUExpireCacheWithClock(opts.CacheSize, clockFunc(now)),
		all:       rate.NewLimiter(rate.Limit(opts.ReviewsPerSecond), opts.ReviewsBurst),
		callers:   map[string]*callerBudget{},
	}, nil
}

// Allowed reports whether sub may look up the Workload namespace/name: the
// verb lookup on enrollment.credo.dev workloads, by a SubjectAccessReview,
// or a decision held from one. An error is a *Limited or kube-apiserver's.
func (r *Reviewer) Allowed(ctx context.Context, sub Subject, namespace, name string) (bool, error) {
	key := sub.key() + "\x02" + namespace + "/" + name
	if v, ok := r.decisions.Get(key); ok {
		return v.(bool), nil
	}
	if err := r.spend(sub.User); err != nil {
		return false, err
	}
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: sub.User, UID: sub.UID, Groups: sub.Groups, Extra: extra(sub.Extra),
		ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: namespace, Verb: enrollapi.VerbLookup,
			Group: enrollv1.GroupVersion.Group, Resource: "workloads", Name: name,
		},
	}}
	metrics.LookupReviewed("SubjectAccessReview")
	if err := r.c.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking kube-apiserver whether %s may look up workload %s/%s: %w", sub.User, namespace, name, err)
	}
	allowed := sar.Status.Allowed && !sar.Status.Denied
	ttl := r.opts.DeniedTTL
	if allowed {
		ttl = r.opts.AllowedTTL
	}
	r.decisions.Add(key, allowed, ttl)
	return allowed, nil
}

func extra(in map[string][]string) map[string]authzv1.ExtraValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]authzv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authzv1.ExtraValue(v)
	}
	return out
}

// tokenReview is a held TokenReview: the subject, or none when the token
// did not authenticate.
type tokenReview struct {
	sub Subject
	ok  bool
}

// Authenticate returns who a Kubernetes token, issued for the audience
// enrollapi.LookupAudience, names: false when kube-apiserver does not
// authenticate it. The review is held for the token lifetime option, keyed
// by the token's SHA-256 (the token itself is never kept). from budgets an
// unauthenticated caller (its address). An error is a *Limited or
// kube-apiserver's.
func (r *Reviewer) Authenticate(ctx context.Context, token, from string) (Subject, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	if v, ok := r.tokens.Get(key); ok {
		tr := v.(tokenReview)
		return tr.sub, tr.ok, nil
	}
	if err := r.spend("address " + from); err != nil {
		return Subject{}, false, err
	}
	review := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{enrollapi.LookupAudience}}}
	metrics.LookupReviewed("TokenReview")
	if err := r.c.Create(ctx, review); err != nil {
		return Subject{}, false, fmt.Errorf("asking kube-apiserver to review a token: %w", err)
	}
	st := review.Status
	tr := tokenReview{ok: st.Authenticated && slices.Contains(st.Audiences, enrollapi.LookupAudience)}
	if tr.ok {
		u := st.User
		tr.sub = Subject{User: u.Username, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			tr.sub.Extra = make(map[string][]string, len(u.Extra))
			for k, v := range u.Extra {
				tr.sub.Extra[k] = []string(v)
			}
		}
	}
	r.tokens.Add(key, tr, r.opts.TokenTTL)
	return tr.sub, tr.ok, nil
}

// spend takes one review from the caller's share and from the budget of
// all callers, or returns the *Limited to answer.
func (r *Reviewer) spend(caller string) error {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(now)
	b, ok := r.callers[caller]
	if !ok {
		share := rate.Limit(max(r.opts.ReviewsPerSecond/callerShare, 0.1))
		b = &callerBudget{lim: rate.NewLimiter(share, max(r.opts.ReviewsBurst/callerShare, 1))}
		r.callers[caller] = b
	}
	b.seen = now
	if !b.lim.AllowN(now, 1) {
		return &Limited{RetryAfter: retryAfter(b.lim, now), Caller: true}
	}
	if !r.all.AllowN(now, 1) {
		return &Limited{RetryAfter: retryAfter(r.all, now)}
	}
	return nil
}

func retryAfter(lim *rate.Limiter, now time.Time) int {
	wait := (1 - lim.TokensAt(now)) / float64(lim.Limit())
	return max(1, int(math.Ceil(wait)))
}

// sweep forgets callers not seen for a minute, at most once a minute: their
// share is full again by then.
func (r *Reviewer) sweep(now time.Time) {
	if now.Sub(r.swept) < time.Minute {
		return
	}
	r.swept = now
	for k, b := range r.callers {
		if now.Sub(b.seen) > time.Minute {
			delete(r.callers, k)
		}
	}
}
