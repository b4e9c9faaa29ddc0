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
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// DefaultTokenUseFlush is how often the join tokens' use counts are
// written: every agent of a fleet enrolls with the same token, and one
// write per enrollment would make them all conflict on it.
const DefaultTokenUseFlush = time.Second

// tokenUses counts the enrollments of each join token in memory until
// they are flushed to its status. The count only reports (no limit is
// enforced from it); a replica that crashes loses at most one interval's
// counts.
type tokenUses struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]*tokenUse
}

// tokenUse is what one token's status gains at the next flush.
type tokenUse struct {
	uses     int64
	at       time.Time
	workload string
}

// add counts one enrollment of token key by workload at at.
func (u *tokenUses) add(key types.NamespacedName, workload string, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[types.NamespacedName]*tokenUse{}
	}
	p := u.pending[key]
	if p == nil {
		p = &tokenUse{}
		u.pending[key] = p
	}
	p.uses++
	if !at.Before(p.at) {
		p.at, p.workload = at, workload
	}
}

// take returns and forgets the counts not written yet.
func (u *tokenUses) take() map[types.NamespacedName]*tokenUse {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.pending
	u.pending = nil
	return p
}

// giveBack adds counts a flush could not write to the next one.
func (u *tokenUses) giveBack(key types.NamespacedName, p *tokenUse) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[types.NamespacedName]*tokenUse{}
	}
	cur := u.pending[key]
	if cur == nil {
		u.pending[key] = p
		return
	}
	cur.uses += p.uses
	if p.at.After(cur.at) {
		cur.at, cur.workload = p.at, p.workload
	}
}

// recordUse counts one enrollment on the token; flushUses writes it.
func (s *Server) recordUse(jt *enrollv1.JoinToken, workload string) {
	s.uses.add(types.NamespacedName{Namespace: jt.Namespace, Name: jt.Name}, workload, s.now())
}

// runUseFlusher writes the counted uses every interval until ctx is done,
// then once more: ServeListener runs it, and calls the last flush after
// the listener stopped answering.
func (s *Server) runUseFlusher(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultTokenUseFlush
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.flushUses(ctx)
		}
	}
}

// flushUses adds each token's counted uses to its status: one write per
// token, conditional on the version read (from the cache first, from the
// API server after a conflict). Counts that could not be written are kept
// for the next flush; those of a token gone are dropped.
func (s *Server) flushUses(ctx context.Context) {
	for key, p := range s.uses.take() {
		err := s.writeUses(ctx, key, p)
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
		default:
			s.Log.Info("could not record join token uses; retrying at the next flush",
				"token", key.Name, "namespace", key.Namespace, "uses", p.uses, "error", err.Error())
			s.uses.giveBack(key, p)
		}
	}
}

func (s *Server) writeUses(ctx context.Context, key types.NamespacedName, p *tokenUse) error {
	var jt enrollv1.JoinToken
	if err := s.Reader.Get(ctx, key, &jt); err != nil {
		// Not in the cache yet, or the cache stopped (the last flush at
		// shutdown): the API server's copy.
		jt = enrollv1.JoinToken{}
		if err := s.APIReader.Get(ctx, key, &jt); err != nil {
			return err
		}
	}
	return reconciler.UpdateStatus(ctx, s.Client, s.APIReader, wait.Backoff{Steps: 4}, &jt, func(jt *enrollv1.JoinToken) (bool, error) {
		jt.Status.Uses += p.uses
		at := metav1.NewTime(p.at)
		if jt.Status.LastUsedAt == nil || !at.Before(jt.Status.LastUsedAt) {
			jt.Status.LastUsedAt, jt.Status.LastWorkload = &at, p.workload
		}
		return true, nil
	})
}
