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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// How far credo puts back, on one release, what another writer undid:
// at most maxRewrites times within rewriteWindow for one thing it placed
// (an account's valuesFrom entry, the platform-values label). A writer
// that erases credo's entry on every change of the release (the
// platform's apps API rebuilding the whole HelmRelease, a controller
// setting spec.valuesFrom to its own list) would otherwise make each of
// credo's writes the cause of the next: a write loop, and a verifier
// delivered only some of the time. Three is enough for an operator's
// hand edit or a one-off rebuild; ten minutes is the sweep's interval.
const (
	maxRewrites   = 3
	rewriteWindow = 10 * time.Minute
)

// platformLabelItem is the rewriteGuard item of the PlatformValuesLabel;
// every other item is the name of an account Secret, the entry's.
const platformLabelItem = "label:platform-values"

// rewriteGuard remembers, in memory, what credo placed on each release
// (by UID: a release deleted and created again starts afresh) and how
// often it put it back. A contested item is not written again until it
// is found in place without credo writing it (its owner lists it now),
// the release is recreated, or the controller restarts: never on a
// timer, which would only make the loop slower.
type rewriteGuard struct {
	mu        sync.Mutex
	items     map[rewriteKey]*rewriteState
	lastPrune time.Time
}

type rewriteKey struct {
	release types.UID
	item    string
}

type rewriteState struct {
	// placed: credo wrote the item, or found it in place; its absence is
	// someone else's doing from then on.
	placed bool
	// rewrites are when credo put it back, within the window.
	rewrites []time.Time
	// contested: put back maxRewrites times within the window and undone
	// again; credo no longer writes it.
	contested bool
	// seen is the last time the item was asked about.
	seen time.Time
}

// held records items in place on release, and ends their contest: their
// owner lists them now.
func (g *rewriteGuard) held(release types.UID, now time.Time, items ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, item := range items {
		st := g.state(rewriteKey{release, item}, now)
		if st.contested {
			st.contested, st.rewrites = false, nil
		}
		st.placed = true
	}
}

// contested returns the first of items that credo may not write on
// release again: contested since before, or put back maxRewrites times
// within the window already, and contested from now on (fresh). Empty
// when all may be written. fresh is true once per contest, whatever the
// cache shows of the account's status: the one Warning.
func (g *rewriteGuard) contested(release types.UID, now time.Time, items ...string) (item string, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, item := range items {
		st := g.state(rewriteKey{release, item}, now)
		st.rewrites = since(st.rewrites, now.Add(-rewriteWindow))
		if st.contested {
			return item, false
		}
		if st.placed && len(st.rewrites) >= maxRewrites {
			st.contested = true
			return item, true
		}
	}
	return "", false
}

// wrote records items written on release, and returns how many of them
// credo put back after someone else undid them: rewrites, each counted
// against the bound. A write the API server refused is not recorded.
func (g *rewriteGuard) wrote(release types.UID, now time.Time, items ...string) (again int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, item := range items {
		st := g.state(rewriteKey{release, item}, now)
		if st.placed {
			st.rewrites = append(st.rewrites, now)
			again++
		}
		st.placed = true
	}
	return again
}

// forget drops what credo itself removed from release: writing it again
// later is no rewrite.
func (g *rewriteGuard) forget(release types.UID, item string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.items, rewriteKey{release, item})
}

// state returns the item's state, created if new. Once a window, states
// not asked about for a window and not contested are dropped, so that
// deleted releases do not pile up; a dropped item's next write is a
// first placement, so the bound holds within any window but the first.
func (g *rewriteGuard) state(k rewriteKey, now time.Time) *rewriteState {
	if g.items == nil {
		g.items = map[rewriteKey]*rewriteState{}
	}
	if now.Sub(g.lastPrune) > rewriteWindow {
		for key, st := range g.items {
			if !st.contested && now.Sub(st.seen) > rewriteWindow {
				delete(g.items, key)
			}
		}
		g.lastPrune = now
	}
	st, ok := g.items[k]
	if !ok {
		st = &rewriteState{}
		g.items[k] = st
	}
	st.seen = now
	return st
}

// since drops the times before from.
func since(times []time.Time, from time.Time) []time.Time {
	out := times[:0]
	for _, t := range times {
		if !t.Before(from) {
			out = append(out, t)
		}
	}
	return out
}
