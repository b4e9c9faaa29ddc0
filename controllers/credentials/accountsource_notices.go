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
	"fmt"
	"slices"
	"sort"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// notAppliedPrecedence orders the reasons of ReleasesNotApplied: a limit
// first (the platform may want to raise it), then what an account or a
// key of the release stands in the way of, then what the release's values
// or chart source leave undecided.
var notAppliedPrecedence = []string{
	credv1.AccountLimitExceededReason,
	credv1.AccountConflictReason,
	credv1.UsernameRefusedReason,
	credv1.InvalidValuesReason,
	credv1.ChartUnresolvedReason,
}

// maxProblems bounds the problems one release's event lists.
const maxProblems = 5

// noticeScope is the scope of an AccountSource's notices on releases.
func noticeScope(source string) string { return "accountsource/" + source }

// report tells each release of problems what the source could not do for
// it (a Warning on its HelmRelease, when that changes), forgets the
// releases that have no problem any more, and counts the releases by
// reason in the source's ReleasesNotApplied condition, naming none.
func (r *AccountSourceReconciler) report(src *credv1.AccountSource, releases map[client.ObjectKey]*helmv2.HelmRelease, problems []problem) {
	byRelease := map[client.ObjectKey][]problem{}
	na := release.NotApplied{}
	for _, p := range problems {
		byRelease[p.release] = append(byRelease[p.release], p)
		na.Add(p.reason, p.release)
	}
	if reason, msg := na.Condition(notAppliedPrecedence...); reason != "" {
		conditions.MarkTrue(src, credv1.ReleasesNotAppliedCondition, reason, "%s", msg)
	} else {
		conditions.Delete(src, credv1.ReleasesNotAppliedCondition)
	}
	if r.Notices == nil {
		return
	}
	scope := noticeScope(src.Name)
	reported := map[client.ObjectKey]bool{}
	for key, ps := range byRelease {
		hr := releases[key]
		if hr == nil {
			continue
		}
		reported[key] = true
		sortProblems(ps)
		r.Notices.Report(hr, scope, ps[0].reason, fmt.Sprintf("AccountSource %s: %s", src.Name, joinProblems(ps)))
	}
	r.Notices.Keep(scope, reported)
}

// forget drops what was reported for the source named name: it is gone.
func (r *AccountSourceReconciler) forget(name string) {
	if r.Notices != nil {
		r.Notices.Keep(noticeScope(name), nil)
	}
}

// sortProblems orders one release's problems by the precedence of their
// reasons, then by message: the event says the same while they do.
func sortProblems(ps []problem) {
	rank := func(reason string) int {
		if i := slices.Index(notAppliedPrecedence, reason); i >= 0 {
			return i
		}
		return len(notAppliedPrecedence)
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ri, rj := rank(ps[i].reason), rank(ps[j].reason); ri != rj {
			return ri < rj
		}
		return ps[i].message < ps[j].message
	})
}

// joinProblems is the messages of one release's problems, the first few.
func joinProblems(ps []problem) string {
	msgs := make([]string, 0, maxProblems+1)
	for i, p := range ps {
		if i == maxProblems {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(ps)-maxProblems))
			break
		}
		msgs = append(msgs, p.message)
	}
	return strings.Join(msgs, "; ")
}

// notAppliedNote is the part of Ready's message that says some releases
// are in ReleasesNotApplied, or "".
func notAppliedNote(obj conditions.Getter) string {
	if !conditions.IsTrue(obj, credv1.ReleasesNotAppliedCondition) {
		return ""
	}
	return "; some releases are not applied in full (" + credv1.ReleasesNotAppliedCondition + ")"
}
