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
	"time"

	"golang.org/x/time/rate"
)

// FailureLimiter limits failed token attempts per client address: each
// address may fail Burst times at once, then once per Every. Successes cost
// nothing, so a fleet enrolling behind one NAT is not slowed by its own
// successes; guessing a token's 256-bit secret is hopeless anyway, the limit
// keeps a scanner from loading the API server.
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

// NewFailureLimiter allows burst failures per address, then one per every.
func NewFailureLimiter(every time.Duration, burst int) *FailureLimiter {
	return &FailureLimiter{Every: every, Burst: burst}
}

func (l *FailureLimiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Allowed reports whether addr may make an attempt now: false once its
// failures have used up the budget.
func (l *FailureLimiter) Allowed(addr string) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.limiters[addr]
	if !ok {
		return true
	}
	return e.lim.TokensAt(l.now()) >= 1
}

// Failed spends one unit of addr's budget.
func (l *FailureLimiter) Failed(addr string) {
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
	e, ok := l.limiters[addr]
	if !ok {
		e = &entry{lim: rate.NewLimiter(rate.Every(l.Every), l.Burst)}
		l.limiters[addr] = e
	}
	e.seen = now
	e.lim.AllowN(now, 1)
}

// sweep forgets addresses whose budget is full again, at most once a minute.
func (l *FailureLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	full := l.Every * time.Duration(l.Burst)
	for addr, e := range l.limiters {
		if now.Sub(e.seen) > full {
			delete(l.limiters, addr)
		}
	}
}
