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
	"hash/fnv"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// pendingRetryAfter is the Retry-After of a refusal for too many pending
// registrations: pending workloads complete within seconds or expire.
const pendingRetryAfter = 10

// recentWindow is how long a registration of this replica is counted
// while the cache does not show it: far longer than the cache lags.
const recentWindow = time.Minute

// checkPending reserves a place for registration id of jt, or refuses it
// when the token already has Limits.MaxPendingPerToken Workloads without a
// certificate. Call it under the token's lock; release the place when the
// registration is not created. The count is the cache's, with the
// registrations this replica made that the cache does not show yet; at the
// limit it is confirmed on the API server, uncached, since a cache that
// lags still shows completed registrations as pending (confirmPending).
// Neither reads the Workloads the token already enrolled: the cost of a
// registration does not grow with the fleet. Across replicas each
// counts under its own lock, so concurrent registrations on N replicas may
// overshoot by at most N-1.
func (s *Server) checkPending(ctx context.Context, jt *enrollv1.JoinToken, id string) *apiError {
	limit := s.Limits.MaxPendingPerToken
	if limit <= 0 {
		return nil
	}
	var cached enrollv1.WorkloadList
	// Only the token's pending Workloads are read (pendingIndex), and only
	// to be counted.
	if err := s.Reader.List(ctx, &cached, client.InNamespace(jt.Namespace),
		client.MatchingFields{pendingIndex: jt.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return unavailable("counting the token's pending workloads", err)
	}
	key := types.NamespacedName{Namespace: jt.Namespace, Name: jt.Name}
	pending := s.recent.count(key, cached.Items, s.cachedAmong(ctx, jt.Namespace, s.recent.ids(key)), s.now())
	if pending >= limit {
		confirmed, read, err := s.confirmPending(ctx, jt, cached.Items, s.recent.ids(key))
		if err != nil {
			return unavailable("counting the token's pending workloads", err)
		}
		if pending = s.recent.count(key, confirmed, read, s.now()); pending >= limit {
			return &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonTooManyPending, retryAfter: pendingRetryAfter,
				msg: fmt.Sprintf("join token %s has %d registered workloads waiting for their certificate, the most the platform allows (%d); retry once they complete or expire",
					jt.Name, pending, limit)}
		}
	}
	s.recent.add(key, id, s.now())
	return nil
}

// registrations are the Workloads this replica registered recently, by
// token: counted as pending until the cache shows them.
type registrations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]time.Time
}

func (r *registrations) add(token types.NamespacedName, id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[types.NamespacedName]map[string]time.Time{}
	}
	if r.m[token] == nil {
		r.m[token] = map[string]time.Time{}
	}
	r.m[token][id] = at
}

// forget releases a place reserved for a registration that was not created.
func (r *registrations) forget(token types.NamespacedName, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m[token], id)
}

// ids returns the token's recent registrations.
func (r *registrations) ids(token types.NamespacedName) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.m[token]))
	for id := range r.m[token] {
		ids = append(ids, id)
	}
	return ids
}

// count returns the token's pending registrations: the pending Workloads
// listed, and the recent registrations the cache does not show yet. Recent
// ones listed or shown (in any state), or older than recentWindow, are
// forgotten.
func (r *registrations) count(token types.NamespacedName, pending []enrollv1.Workload, shown map[string]bool, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	recent := r.m[token]
	for i := range pending {
		delete(recent, pending[i].Name)
	}
	n := len(pending)
	for id, at := range recent {
		if shown[id] || now.Sub(at) > recentWindow {
			delete(recent, id)
			continue
		}
		n++
	}
	if len(recent) == 0 {
		delete(r.m, token)
	}
	return n
}

// isPending reports whether a Workload still waits for its first
// certificate.
func isPending(wl *enrollv1.Workload) bool {
	return wl.Status.Serial == "" && wl.DeletionTimestamp.IsZero()
}

// confirmPending reads uncached each Workload counted as pending of jt:
// those the cache shows pending and this replica's recent registrations.
// It returns the ones still pending, and the names it read an answer for
// (a Workload in any state, or none: a registration since deleted), which
// are no longer this replica's to count. At most the limit and the
// registrations of the last moments are read, whatever the token enrolled.
func (s *Server) confirmPending(ctx context.Context, jt *enrollv1.JoinToken, cached []enrollv1.Workload, recent []string) ([]enrollv1.Workload, map[string]bool, error) {
	names := make([]string, 0, len(cached)+len(recent))
	for i := range cached {
		names = append(names, cached[i].Name)
	}
	names = append(names, recent...)
	var pending []enrollv1.Workload
	read := make(map[string]bool, len(names))
	for _, name := range names {
		if read[name] {
			continue
		}
		var wl enrollv1.Workload
		err := s.APIReader.Get(ctx, types.NamespacedName{Namespace: jt.Namespace, Name: name}, &wl)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, nil, err
		case wl.Spec.Token == jt.Name && isPending(&wl):
			pending = append(pending, wl)
		}
		read[name] = true
	}
	return pending, read, nil
}

// cachedAmong returns which of ids the cache shows as Workloads of
// namespace, in any state. A lookup that fails shows nothing: the
// registration stays counted.
func (s *Server) cachedAmong(ctx context.Context, namespace string, ids []string) map[string]bool {
	shown := map[string]bool{}
	for _, id := range ids {
		var list enrollv1.WorkloadList
		if err := s.Reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{nameIndex: id},
			client.UnsafeDisableDeepCopy); err == nil && len(list.Items) > 0 {
			shown[id] = true
		}
	}
	return shown
}

// keyedLocks is a fixed set of mutexes a key hashes to: bounded memory
// whatever the number of keys, and keys rarely share a mutex.
type keyedLocks [64]sync.Mutex

// lock locks key's mutex and returns its unlock.
func (l *keyedLocks) lock(key string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	m := &l[h.Sum32()%uint32(len(l))]
	m.Lock()
	return m.Unlock
}
