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
// registrations this replica made that the cache does not show finished;
// at the limit it is confirmed on the API server, uncached, since a cache
// that lags still shows completed registrations as pending
// (confirmPending). Neither reads the Workloads the token already
// enrolled: the cost of a registration does not grow with the fleet. On
// one replica the limit holds exactly; across replicas each counts under
// its own lock, and sees the others' registrations once its cache does, so
// replicas registering at the same moment may together overshoot it.
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
	listed := make(map[string]bool, len(cached.Items))
	for i := range cached.Items {
		listed[cached.Items[i].Name] = true
	}
	pending := s.recent.count(key, listed, s.cachedFinished(ctx, jt, s.recent.ids(key)), true, s.now())
	if pending >= limit {
		confirmed, finished, err := s.confirmPending(ctx, jt, cached.Items, s.recent.ids(key), limit)
		if err != nil {
			return unavailable("counting the token's pending workloads", err)
		}
		if pending = s.recent.count(key, confirmed, finished, false, s.now()); pending >= limit {
			return &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonTooManyPending, retryAfter: pendingRetryAfter,
				msg: fmt.Sprintf("join token %s has %d registered workloads waiting for their certificate, the most the platform allows (%d); retry once they complete or expire",
					jt.Name, pending, limit)}
		}
	}
	s.recent.add(key, id, s.now())
	return nil
}

// registrations are the Workloads this replica registered recently, by
// token: counted as pending until they are known finished, or for
// recentWindow.
type registrations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]time.Time
	// pruned is when expired registrations of every token were last
	// forgotten (a single-use token's are never counted again).
	pruned time.Time
}

func (r *registrations) add(token types.NamespacedName, id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[types.NamespacedName]map[string]time.Time{}
	}
	if at.Sub(r.pruned) > recentWindow {
		for t, recent := range r.m {
			for id, added := range recent {
				if at.Sub(added) > recentWindow {
					delete(recent, id)
				}
			}
			if len(recent) == 0 {
				delete(r.m, t)
			}
		}
		r.pruned = at
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

// count returns the token's pending registrations: those named pending,
// and the recent ones neither among them nor finished. Recent ones
// finished, or older than recentWindow, are forgotten; so are those named
// pending when the names are the cache's (cached), which shows them from
// then on until they finish. A recent registration the API server confirms
// pending stays remembered: the cache may not show it yet.
func (r *registrations) count(token types.NamespacedName, pending, finished map[string]bool, cached bool, now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	recent := r.m[token]
	n := len(pending)
	for id, at := range recent {
		switch {
		case finished[id] || now.Sub(at) > recentWindow:
			delete(recent, id)
		case pending[id]:
			if cached {
				delete(recent, id)
			}
		default:
			n++
		}
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

// finishedFor reports whether wl no longer counts as a pending
// registration of jt: it has its certificate, is being deleted, or is of
// another token.
func finishedFor(wl *enrollv1.Workload, jt *enrollv1.JoinToken) bool {
	return wl.Spec.Token != jt.Name || !isPending(wl)
}

// confirmPending reads uncached the Workloads counted as pending of jt
// (those the cache shows pending, then this replica's recent
// registrations) until limit of them are confirmed pending, when the
// answer is a refusal whatever the rest. It returns the names confirmed
// pending and those read finished. A registration not found is neither:
// a recent one may be being created, and stays counted until its window
// ends; one the cache showed was deleted since. The Workloads the token
// enrolled are never read.
func (s *Server) confirmPending(ctx context.Context, jt *enrollv1.JoinToken, cached []enrollv1.Workload, recent []string, limit int) (pending, finished map[string]bool, err error) {
	names := make([]string, 0, len(cached)+len(recent))
	for i := range cached {
		names = append(names, cached[i].Name)
	}
	names = append(names, recent...)
	pending, finished = map[string]bool{}, map[string]bool{}
	for _, name := range names {
		if len(pending) >= limit {
			break
		}
		if pending[name] || finished[name] {
			continue
		}
		var wl enrollv1.Workload
		err := s.APIReader.Get(ctx, types.NamespacedName{Namespace: jt.Namespace, Name: name}, &wl)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, nil, err
		case finishedFor(&wl, jt):
			finished[name] = true
		default:
			pending[name] = true
		}
	}
	return pending, finished, nil
}

// cachedFinished returns which of ids the cache shows finished as
// registrations of jt (finishedFor). One the cache does not show, or
// shows pending, or a lookup that fails, is not: it stays counted.
func (s *Server) cachedFinished(ctx context.Context, jt *enrollv1.JoinToken, ids []string) map[string]bool {
	finished := map[string]bool{}
	for _, id := range ids {
		var list enrollv1.WorkloadList
		if err := s.Reader.List(ctx, &list, client.InNamespace(jt.Namespace), client.MatchingFields{nameIndex: id},
			client.UnsafeDisableDeepCopy); err == nil && len(list.Items) == 1 && finishedFor(&list.Items[0], jt) {
			finished[id] = true
		}
	}
	return finished
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
