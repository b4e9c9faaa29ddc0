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

package release

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A rule kind (TrustSource, AccountSource) is cluster-scoped and selects
// the releases of every tenant, by what the releases' authors write: their
// labels, chart, values and names. What a rule cannot do for one release
// is that release's to hear, not the rule's Ready: a Warning event on the
// HelmRelease (Notices), and on the rule a count by reason
// (ReleasesNotApplied, NotApplied) that names no release.

// maxNoticeLength bounds the message of a notice; an Event's message is
// cut by the API server at about 1 KiB.
const maxNoticeLength = 1000

// Notices records a Warning event on a HelmRelease when what a rule could
// not do for it changes, and only then (and once more after the
// controller restarts): never on every reconcile of a rule that is
// reconciled whenever any release changes. It is safe for concurrent use.
type Notices struct {
	// Recorder records the events.
	Recorder events.Recorder
	// Action is the action of every event.
	Action string

	mu   sync.Mutex
	last map[noticeKey]notice
}

// noticeKey is one release, for one scope (a rule, or a controller).
type noticeKey struct {
	scope   string
	release client.ObjectKey
}

// notice is the last event recorded for a noticeKey.
type notice struct {
	uid             types.UID
	reason, message string
}

// Report records a Warning of reason and message on hr for scope, unless
// the last one recorded for hr (of its UID) and scope said the same. A
// message longer than an Event holds is cut.
func (n *Notices) Report(hr *helmv2.HelmRelease, scope, reason, message string) {
	if len(message) > maxNoticeLength {
		message = message[:maxNoticeLength-3] + "..."
	}
	key := noticeKey{scope: scope, release: client.ObjectKeyFromObject(hr)}
	now := notice{uid: hr.UID, reason: reason, message: message}
	n.mu.Lock()
	if n.last == nil {
		n.last = map[noticeKey]notice{}
	}
	same := n.last[key] == now
	n.last[key] = now
	n.mu.Unlock()
	if same || n.Recorder == nil {
		return
	}
	n.Recorder.AnnotatedEventf(hr, nil, nil, corev1.EventTypeWarning, reason, n.Action, "%s", message)
}

// Clear forgets what was reported on the release for scope: the same
// problem, should it come back, is reported again.
func (n *Notices) Clear(release client.ObjectKey, scope string) {
	n.mu.Lock()
	delete(n.last, noticeKey{scope: scope, release: release})
	n.mu.Unlock()
}

// Keep forgets what was reported for scope on every release not in keep
// (nil forgets the scope: its rule is gone).
func (n *Notices) Keep(scope string, keep map[client.ObjectKey]bool) {
	n.mu.Lock()
	for k := range n.last {
		if k.scope == scope && !keep[k.release] {
			delete(n.last, k)
		}
	}
	n.mu.Unlock()
}

// NotApplied is what a rule could not do, counted by reason: the releases
// of each reason (a release with several reasons counts under each).
type NotApplied map[string]map[client.ObjectKey]bool

// Add counts release under reason.
func (na NotApplied) Add(reason string, release client.ObjectKey) {
	if na[reason] == nil {
		na[reason] = map[client.ObjectKey]bool{}
	}
	na[reason][release] = true
}

// Releases is the number of releases counted under any reason.
func (na NotApplied) Releases() int {
	all := map[client.ObjectKey]bool{}
	for _, rels := range na {
		for k := range rels {
			all[k] = true
		}
	}
	return len(all)
}

// Condition returns the reason and message of the ReleasesNotApplied
// condition: the first of precedence that was counted (else the first
// counted by name), and the count of each reason, in that order. It names
// no release: the releases hear it from Notices. An empty NotApplied has
// no reason.
func (na NotApplied) Condition(precedence ...string) (reason, message string) {
	if len(na) == 0 {
		return "", ""
	}
	reasons := make([]string, 0, len(na))
	for r := range na {
		reasons = append(reasons, r)
	}
	rank := func(r string) int {
		if i := slices.Index(precedence, r); i >= 0 {
			return i
		}
		return len(precedence)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	counts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		counts = append(counts, fmt.Sprintf("%s %d", r, len(na[r])))
	}
	return reasons[0], fmt.Sprintf("%d release(s) not applied in full (%s); each has a Warning event saying why: "+
		"kubectl get events -A --field-selector involvedObject.kind=HelmRelease,reason=%s",
		na.Releases(), strings.Join(counts, ", "), reasons[0])
}
