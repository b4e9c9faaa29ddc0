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

package enrolldriver

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Result is what a closed-loop run measured.
type Result struct {
	// Latencies are those of every operation, refused ones included.
	Latencies []time.Duration
	// Elapsed is the wall time of the whole run.
	Elapsed time.Duration
	// Refusals count the failed operations by Key.
	Refusals map[string]int
}

// Failed is the number of failed operations.
func (r Result) Failed() int {
	n := 0
	for _, c := range r.Refusals {
		n += c
	}
	return n
}

// String lists the refusals by key, most frequent first.
func (r Result) String() string {
	lines := make([]string, 0, len(r.Refusals))
	for k, c := range r.Refusals {
		lines = append(lines, fmt.Sprintf("%6d %s", c, k))
	}
	slices.Sort(lines)
	slices.Reverse(lines)
	return strings.Join(lines, "\n")
}

// Run runs n operations over clients goroutines, each calling op with its
// own index, closed-loop: a client starts its next operation when the last
// one ended.
func Run(clients, n int, op func(client int) error) Result {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		res = Result{Refusals: map[string]int{}}
	)
	next := make(chan struct{})
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			var mine []time.Duration
			refused := map[string]int{}
			for range next {
				t0 := time.Now()
				if err := op(i); err != nil {
					refused[Key(err)]++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, mine...)
			for k, c := range refused {
				res.Refusals[k] += c
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}
