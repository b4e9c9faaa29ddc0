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
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// FailureLimiter limits failed token attempts per key: each key may fail
// Burst times at once, then once per Every. The server's key is the client
// address and the token id (attemptKey). Successes cost nothing, so a fleet
// enrolling behind one NAT is not slowed by its own successes; guessing a
// token's 256-bit secret is hopeless anyway, the limit keeps a scanner from
// loading the API server.
type FailureLimiter struct {
	Every time.Duration
	Burst int
	// Now returns the time; time.Now when nil.
	Now func() time.Time

	mu       sync.Mutex
	limiters map[string]*entry
	swept    time.Time
}

type entry struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewFailureLimiter allows burst failures per key, then one per every.
func NewFailureLimiter(every time.Duration, burst int) *FailureLimiter {
	return &FailureLimiter{Every: every, Burst: burst}
}

func (l *FailureLimiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Allowed reports whether key may make an attempt now: false once its
// failures have used up the budget.
func (l *FailureLimiter) Allowed(key string) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.limiters[key]
	if !ok {
		return true
	}
	return e.lim.TokensAt(l.now()) >= 1
}

// Failed spends one unit of key's budget.
func (l *FailureLimiter) Failed(key string) {
	if l == nil {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limiters == nil {
		l.limiters = map[string]*entry{}
	}
	l.sweep(now)
	e, ok := l.limiters[key]
	if !ok {
		e = &entry{lim: rate.NewLimiter(rate.Every(l.Every), l.Burst)}
		l.limiters[key] = e
	}
	e.seen = now
	e.lim.AllowN(now, 1)
}

// sweep forgets keys whose budget is full again, at most once a minute.
func (l *FailureLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	full := l.Every * time.Duration(l.Burst)
	for key, e := range l.limiters {
		if now.Sub(e.seen) > full {
			delete(l.limiters, key)
		}
	}
}

// attemptKey is what failed token attempts are counted against: the client
// address and the id of an existing JoinToken the attempt named, or the
// address alone for ids that name no token and malformed tokens. Failures
// behind one address (a NAT) thus never lock out another token, and a
// scanner of ids shares one budget per address.
func attemptKey(addr, tokenID string) string { return addr + " " + tokenID }

// Defaults of the refusal log's budget.
const (
	refusalLogBurst = 5
	refusalLogEvery = 10 * time.Second
)

// sampledLog logs at a bounded rate: Burst lines at once, then one per
// Every; the lines dropped are counted in the next one ("suppressed").
// Refusals of unauthenticated callers go through it so that a scanner
// cannot flood the log; the refusal metric counts every one.
type sampledLog struct {
	lim        *rate.Limiter
	suppressed atomic.Int64
}

func newSampledLog() *sampledLog {
	return &sampledLog{lim: rate.NewLimiter(rate.Every(refusalLogEvery), refusalLogBurst)}
}

// Info logs msg when the budget allows; a nil sampledLog always does.
func (l *sampledLog) Info(log logr.Logger, msg string, kv ...any) {
	if l != nil {
		if !l.lim.Allow() {
			l.suppressed.Add(1)
			return
		}
		if n := l.suppressed.Swap(0); n > 0 {
			kv = append(kv, "suppressed", n)
		}
	}
	log.Info(msg, kv...)
}
