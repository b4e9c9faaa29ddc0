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

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// printSummary writes the sections of s, each under its own title line so
// that it reads without the others, and returns how many sections could
// not be read for a reason other than RBAC or an API the cluster does not
// serve. Times are durations from now: kubectl's own columns cannot say
// "in 3h".
func printSummary(w io.Writer, s *summary, now time.Time) (failed int, err error) {
	ew := &errWriter{w: w}
	printed := 0
	title := func(t string) string {
		if printed++; printed > 1 {
			ew.printf("\n")
		}
		return t + " in " + s.Namespace + ":"
	}
	failed += printSection(ew, title("Trust anchors"), s.Anchors, anchorsResource, s.Namespace, func(items []trustv1.TrustAnchor) {
		printAnchors(ew, items, now)
	})
	failed += printSection(ew, title("Accounts"), s.Accounts, accountsResource, s.Namespace, func(items []accessv1.Account) {
		printAccountSummary(ew, items, now)
	})
	failed += printSection(ew, title("Workloads"), s.Workloads, workloadsResource, s.Namespace, func(items []enrollv1.Workload) {
		printWorkloads(ew, items, now)
	})
	failed += printTokenSection(ew, title("Join tokens that can still enroll"), s.Tokens, s.Namespace, now)
	return failed, ew.err
}

// printSection prints the title line, then either the table or one line
// saying why there is none.
func printSection[T any](ew *errWriter, title string, sec section[T], resource, ns string, table func([]T)) int {
	if sec.Err != nil {
		line, failed := unreadable(sec.Err, resource, ns)
		ew.printf("%s %s\n", title, line)
		if failed {
			return 1
		}
		return 0
	}
	if len(sec.Items) == 0 {
		ew.printf("%s none\n", title)
		return 0
	}
	ew.printf("%s\n", title)
	table(sec.Items)
	return 0
}

// printAnchors lists the anchors soonest expiry first; an anchor with
// nothing projected has no expiry and comes first.
func printAnchors(ew *errWriter, items []trustv1.TrustAnchor, now time.Time) {
	sort.SliceStable(items, func(i, j int) bool {
		return earlier(items[i].Status.NotAfter, items[j].Status.NotAfter, items[i].Name, items[j].Name)
	})
	tw := ew.table("NAME", "SOURCE", "LEG", "EXPIRES", "SUSPENDED", "READY", "STATUS")
	for i := range items {
		a := &items[i]
		ready, msg := readyOf(a.Status.Conditions)
		tw.row(a.Name, a.Spec.Source.Name, string(a.Status.Leg), expiry(a.Status.NotAfter, now), suspended(a.Spec.Suspend), ready, msg)
	}
	tw.flush()
}

// printAccountSummary lists the accounts by name with the origin of the
// current password, when and by whom it last changed, whether the engine
// is known to use it (Applied: status/reason), whether the account is
// suspended, and its Ready condition.
func printAccountSummary(ew *errWriter, items []accessv1.Account, now time.Time) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	tw := ew.table("NAME", "RELEASE", "USERNAME", "OWNER", "ORIGIN", "LAST CHANGE", "BY", "APPLIED", "SUSPENDED", "READY", "STATUS")
	for i := range items {
		a := &items[i]
		by := "-"
		if n := len(a.Status.History); n > 0 {
			by = a.Status.History[n-1].By
		}
		ready, msg := "-", "-"
		if r := a.Status.Ready; r != nil {
			ready, msg = r.Status, orDash(r.Message)
		}
		tw.row(a.Name, a.Spec.Release, a.Spec.Username, a.Spec.Owner, a.Status.Origin, ago(a.Status.LastChange, now), by, applied(a.Status.Applied),
			suspended(a.Spec.Suspend), ready, msg)
	}
	tw.flush()
}

// applied is an account's Applied condition as status/reason, "-" before
// the controller set it.
func applied(c *accessv1.AccountApplied) string {
	if c == nil {
		return "-"
	}
	return c.Status + "/" + c.Reason
}

// suspended is a spec.suspend as flux get prints it: True or False.
func suspended(s bool) string {
	if s {
		return "True"
	}
	return "False"
}

// printWorkloads lists the workloads soonest expiry first, with when their
// renewal is due.
func printWorkloads(ew *errWriter, items []enrollv1.Workload, now time.Time) {
	sort.SliceStable(items, func(i, j int) bool {
		return earlier(items[i].Status.NotAfter, items[j].Status.NotAfter, items[i].Name, items[j].Name)
	})
	tw := ew.table("NAME", "HOSTNAME", "POLICY", "RENEWAL DUE", "EXPIRES", "READY", "STATUS")
	for i := range items {
		wl := &items[i]
		ready, msg := readyOf(wl.Status.Conditions)
		tw.row(wl.Name, wl.Spec.Hostname, wl.Spec.Policy, renewal(wl.Status.RenewAfter, now), expiry(wl.Status.NotAfter, now), ready, msg)
	}
	tw.flush()
}

// printTokenSection lists the join tokens that can still enroll, soonest
// expiry first, and counts the others (revoked or expired), which
// `kubectl credo token list` shows.
func printTokenSection(ew *errWriter, title string, sec section[enrollv1.JoinToken], ns string, now time.Time) int {
	var usable []enrollv1.JoinToken
	for i := range sec.Items {
		// The platform maximum is the server's; kubectl judges by the record.
		if sec.Items[i].UsableAt(now, 0) {
			usable = append(usable, sec.Items[i])
		}
	}
	hidden := len(sec.Items) - len(usable)
	note := fmt.Sprintf("%d revoked or expired: kubectl credo token list -n %s", hidden, ns)
	if sec.Err == nil && len(usable) == 0 && hidden > 0 {
		ew.printf("%s none (%s)\n", title, note)
		return 0
	}
	failed := printSection(ew, title, section[enrollv1.JoinToken]{Items: usable, Err: sec.Err}, tokensResource, ns, func(items []enrollv1.JoinToken) {
		sort.SliceStable(items, func(i, j int) bool {
			return earlier(&items[i].Spec.ExpiresAt, &items[j].Spec.ExpiresAt, items[i].Name, items[j].Name)
		})
		tw := ew.table("ID", "POLICY", "EXPIRES", "USES", "LAST USED", "DESCRIPTION")
		for i := range items {
			jt := &items[i]
			tw.row(jt.Name, jt.Spec.Policy, expiry(&jt.Spec.ExpiresAt, now), fmt.Sprint(jt.Status.Uses), ago(jt.Status.LastUsedAt, now), jt.Spec.Description)
		}
		tw.flush()
	})
	if sec.Err == nil && len(usable) > 0 && hidden > 0 {
		ew.printf("(and %s)\n", note)
	}
	return failed
}

// earlier orders by time, a missing time first, then by name.
func earlier(a, b *metav1.Time, nameA, nameB string) bool {
	switch {
	case a == nil && b == nil:
		return nameA < nameB
	case a == nil || b == nil:
		return a == nil
	case !a.Equal(b):
		return a.Before(b)
	default:
		return nameA < nameB
	}
}

// readyOf returns the status and message of the Ready condition, "-" when
// there is none yet.
func readyOf(conds []metav1.Condition) (status, message string) {
	for _, c := range conds {
		if c.Type == meta.ReadyCondition {
			return string(c.Status), orDash(c.Message)
		}
	}
	return "-", "-"
}

// expiry is "in 3h" or "expired 2d ago"; "-" without a time.
func expiry(t *metav1.Time, now time.Time) string { return relative(t, now, "expired") }

// renewal is "in 15h" before the renewal window opens, then "due 2h ago".
func renewal(t *metav1.Time, now time.Time) string { return relative(t, now, "due") }

// relative is "in 3h" before t, "<past> 2d ago" after it, and "-" without a
// time.
func relative(t *metav1.Time, now time.Time, past string) string {
	switch {
	case t == nil:
		return "-"
	case now.Before(t.Time):
		return "in " + duration.HumanDuration(t.Sub(now))
	default:
		return past + " " + duration.HumanDuration(now.Sub(t.Time)) + " ago"
	}
}

// ago is "3m ago"; "-" without a time.
func ago(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

// errWriter keeps the first write error, so that printing reads straight.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// table starts a tab-aligned table with its header.
func (e *errWriter) table(header ...string) *tableWriter {
	t := &tableWriter{ew: e, tw: tabwriter.NewWriter(e, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

// Write lets a tabwriter write through the errWriter.
func (e *errWriter) Write(p []byte) (int, error) {
	e.printf("%s", p)
	return len(p), e.err
}

// tableWriter is one table of a section.
type tableWriter struct {
	ew *errWriter
	tw *tabwriter.Writer
}

// row writes one row; a cell is put on one line and an empty cell shows "-".
func (t *tableWriter) row(cells ...string) {
	for i, c := range cells {
		c = strings.Join(strings.Fields(c), " ")
		if c == "" {
			c = "-"
		}
		cells[i] = c
	}
	if _, err := fmt.Fprintln(t.tw, strings.Join(cells, "\t")); err != nil && t.ew.err == nil {
		t.ew.err = err
	}
}

func (t *tableWriter) flush() {
	if err := t.tw.Flush(); err != nil && t.ew.err == nil {
		t.ew.err = err
	}
}
