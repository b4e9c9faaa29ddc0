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

	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// pendingRetryAfter is the Retry-After of a refusal for too many pending
// registrations: pending workloads complete within seconds or expire.
const pendingRetryAfter = 10

// checkPending refuses a registration when the token already has
// Limits.MaxPendingPerToken Workloads without a certificate. They are
// counted on the API server, uncached, so that registrations a moment ago
// count. Across replicas each counts under its own lock, so concurrent
// registrations on N replicas may overshoot by at most N-1.
func (s *Server) checkPending(ctx context.Context, jt *enrollv1.JoinToken) *apiError {
	limit := s.Limits.MaxPendingPerToken
	if limit <= 0 {
		return nil
	}
	var list enrollv1.WorkloadList
	if err := s.APIReader.List(ctx, &list, client.InNamespace(jt.Namespace),
		client.MatchingFields{enrollv1.WorkloadTokenField: jt.Name}); err != nil {
		return unavailable("counting the token's pending workloads", err)
	}
	pending := 0
	for i := range list.Items {
		if wl := &list.Items[i]; wl.Status.Serial == "" && wl.DeletionTimestamp.IsZero() {
			pending++
		}
	}
	if pending < limit {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonTooManyPending, retryAfter: pendingRetryAfter,
		msg: fmt.Sprintf("join token %s has %d registered workloads waiting for their certificate, the most the platform allows (%d); retry once they complete or expire",
			jt.Name, pending, limit)}
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
