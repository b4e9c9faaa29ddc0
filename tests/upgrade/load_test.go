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

package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/credo-dev/credo/tests/enrolldriver"
)

// op is one operation of the load: what, when, and its error.
type op struct {
	kind       string
	start, end time.Time
	err        error
}

// load runs operations in loops until stopped, each kind on its own
// goroutine, and keeps every result.
type load struct {
	mu     sync.Mutex
	ops    []op
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// loop runs f every interval until ctx ends.
func (l *load) loop(ctx context.Context, kind string, interval time.Duration, f func(context.Context) error) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for ctx.Err() == nil {
			start := time.Now()
			err := f(ctx)
			if ctx.Err() != nil {
				return // stopped mid-operation: not a result
			}
			l.mu.Lock()
			l.ops = append(l.ops, op{kind: kind, start: start, end: time.Now(), err: err})
			l.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}()
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// startLoad runs, until stopped: mints of db-app, renewals of an agent of
// the working tree's enrollment library, and rotations of db's CA, each a
// write of its source Secret and a wait for its projection (an operation
// that failed when the projection lags more than rotationBound).
func startLoad(tn *tenant, agent *enrolldriver.Agent, server string) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel}
	l.loop(ctx, "mint", 300*time.Millisecond, func(context.Context) error { return tn.mint("db-app") })
	l.loop(ctx, "renewal", 500*time.Millisecond, func(context.Context) error { return agent.Renew(server) })
	l.loop(ctx, "rotation", 3*time.Second, func(ctx context.Context) error {
		want, err := tn.rotate("db")
		if err != nil {
			return err
		}
		deadline := time.Now().Add(rotationBound)
		for ctx.Err() == nil {
			if got, err := tn.projected("db"); err == nil && bytes.Equal(got, want) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("db.tenant-ca not rotated within %s", rotationBound)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	})
	return l
}

// rotationBound is how long a rotation may take to reach the projection
// outside the rollout (the trust-controller reacts to the source's watch
// event within a second or so here).
const rotationBound = 10 * time.Second

// window is when the rollout may interrupt operations: from the first
// controller stopped to grace after the last one is ready.
type window struct{ from, to time.Time }

func (w window) overlaps(o op) bool { return !o.end.Before(w.from) && !o.start.After(w.to) }

// report counts the operations of each kind, the failed ones and those
// failed outside w, and lists the latter.
func (l *load) report(w window) (summary string, outside []string, after map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	type count struct{ all, failed, inWindow int }
	counts := map[string]*count{}
	after = map[string]int{}
	for _, o := range l.ops {
		c := counts[o.kind]
		if c == nil {
			c = &count{}
			counts[o.kind] = c
		}
		c.all++
		if o.start.After(w.to) && o.err == nil {
			after[o.kind]++
		}
		if o.err == nil {
			continue
		}
		c.failed++
		if w.overlaps(o) {
			c.inWindow++
			continue
		}
		outside = append(outside, fmt.Sprintf("%s at %s (%s after the window's start): %v",
			o.kind, o.start.Format("15:04:05.000"), o.start.Sub(w.from).Round(time.Millisecond), o.err))
	}
	var parts []string
	for _, k := range []string{"mint", "renewal", "rotation"} {
		if c := counts[k]; c != nil {
			parts = append(parts, fmt.Sprintf("%d %ss (%d failed, %d of them in the rollout)", c.all, k, c.failed, c.inWindow))
		}
	}
	return strings.Join(parts, ", "), outside, after
}
