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
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Defaults of the uncached join token lookups: a token id the cache does
// not hold is looked up on the API server (a token minted a moment ago),
// a cluster-wide list that an unauthenticated caller must not be able to
// repeat at will.
const (
	// DefaultUnknownTokenTTL is how long an id the API server had no
	// JoinToken for is answered from memory.
	DefaultUnknownTokenTTL = 5 * time.Second
	// DefaultUnknownTokenCacheSize bounds the ids remembered: at about a
	// hundred bytes each, well under a megabyte.
	DefaultUnknownTokenCacheSize = 4096
	// DefaultTokenLookupsPerSecond and DefaultTokenLookupsBurst are the
	// budget of uncached lookups across all callers. Only a token the
	// informer has not seen yet needs one, for the milliseconds it lags.
	DefaultTokenLookupsPerSecond = 10
	DefaultTokenLookupsBurst     = 20
)

// Flag names of the lookup limits, quoted in messages.
const (
	FlagUnknownTokenTTL       = "unknown-token-cache-ttl"
	FlagUnknownTokenCacheSize = "unknown-token-cache-size"
	FlagTokenLookupsPerSecond = "token-lookups-per-second"
	FlagTokenLookupsBurst     = "token-lookups-burst"
)

// unknownTokens remembers, for a TTL, the token ids the API server had no
// JoinToken for, so that one unknown id sent again (an agent whose token
// was deleted, retrying; a replayed request) costs no second list. It holds
// at most its size, the least recently used evicted first.
//
// It is asked only after the cache: a JoinToken the informer holds is found
// there whatever this remembers. So a token created after its id was
// remembered is refused (as unknown) at most until the informer sees it,
// and never longer than the TTL. Ids are random and known only once the
// token exists, so that takes a request naming an id before its token was
// created.
type unknownTokens struct {
	ttl   time.Duration
	cache *utilcache.LRUExpireCache
}

// newUnknownTokens remembers at most size ids for ttl each, by the clock
// now; nil (remembers nothing) when either is not positive.
func newUnknownTokens(ttl time.Duration, size int, now func() time.Time) *unknownTokens {
	if ttl <= 0 || size <= 0 {
		return nil
	}
	return &unknownTokens{ttl: ttl, cache: utilcache.NewLRUExpireCacheWithClock(size, clockFunc(now))}
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// has reports whether id was unknown within the TTL.
func (u *unknownTokens) has(id string) bool {
	if u == nil {
		return false
	}
	_, ok := u.cache.Get(id)
	return ok
}

// add remembers id as unknown for the TTL.
func (u *unknownTokens) add(id string) {
	if u != nil {
		u.cache.Add(id, struct{}{}, u.ttl)
	}
}

// lookupBudget is the budget of uncached join token lookups of the server,
// across all callers: the per-address limit of failed attempts does not
// bound what many addresses cost together.
type lookupBudget struct {
	mu  sync.Mutex
	lim *rate.Limiter
}

// newLookupBudget allows burst lookups at once, then perSecond; nil (no
// budget) when perSecond is not positive.
func newLookupBudget(perSecond float64, burst int) *lookupBudget {
	if perSecond <= 0 {
		return nil
	}
	return &lookupBudget{lim: rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))}
}

// take spends one lookup at now, or returns the 429 to answer: over the
// budget, with the seconds until the next lookup is allowed as Retry-After.
func (b *lookupBudget) take(now time.Time) *apiError {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lim.AllowN(now, 1) {
		return nil
	}
	wait := (1 - b.lim.TokensAt(now)) / float64(b.lim.Limit())
	seconds := max(1, int(math.Ceil(wait)))
	return &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonTokenLookupsLimited, retryAfter: seconds,
		msg: fmt.Sprintf("the enrollment server is looking up too many join tokens it does not know yet, from all clients; retry in %d s", seconds)}
}

// uncachedTokens returns the JoinTokens named id on the API server, for an
// id the cache does not hold: a token minted a moment ago. An id the API
// server had no token for is remembered for a while, and the lookups of all
// callers share one budget; over it the answer is a 429 (retry), which
// judges nothing of the caller.
func (s *Server) uncachedTokens(ctx context.Context, id string) ([]enrollv1.JoinToken, *apiError) {
	if s.unknown.has(id) {
		return nil, nil
	}
	if e := s.lookups.take(s.now()); e != nil {
		return nil, e
	}
	var list enrollv1.JoinTokenList
	if err := s.APIReader.List(ctx, &list, client.MatchingFieldsSelector{Selector: nameSelector(id)}); err != nil {
		return nil, unavailable("reading join tokens", err)
	}
	if len(list.Items) == 0 {
		s.unknown.add(id)
	}
	return list.Items, nil
}
