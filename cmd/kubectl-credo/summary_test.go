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
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// now is the time every printing test reads the summary at.
var now = time.Date(2026, 12, 3, 3, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }

func ready(status metav1.ConditionStatus, msg string) []metav1.Condition {
	return []metav1.Condition{{Type: "Ready", Status: status, Reason: "Test", Message: msg}}
}

func anchor(name string, notAfter *metav1.Time, status metav1.ConditionStatus, msg string) trustv1.TrustAnchor {
	return trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       trustv1.TrustAnchorSpec{Release: name, Source: trustv1.SecretKeySource{Name: name + "-ca"}},
		Status:     trustv1.TrustAnchorStatus{Leg: trustv1.LegLabel, NotAfter: notAfter, Conditions: ready(status, msg)},
	}
}

func suspendedAnchor(a trustv1.TrustAnchor) trustv1.TrustAnchor {
	a.Spec.Suspend = true
	return a
}

func workload(name string, renewAfter, notAfter *metav1.Time, msg string) enrollv1.Workload {
	return enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       enrollv1.WorkloadSpec{Policy: "web", Token: "t1", Hostname: name + ".example.org"},
		Status:     enrollv1.WorkloadStatus{RenewAfter: renewAfter, NotAfter: notAfter, Conditions: ready(metav1.ConditionTrue, msg)},
	}
}

const secretHash = "sha256:5d41402abc4b2a76b9719d911017c592a5d41402abc4b2a76b9719d911017c59"

func joinToken(id string, expires time.Duration, revoked bool, uses int64) enrollv1.JoinToken {
	return enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: id},
		Spec:       enrollv1.JoinTokenSpec{Policy: "web", SecretHash: secretHash, ExpiresAt: *at(expires), Revoked: revoked, Description: "batch " + id},
		Status:     enrollv1.JoinTokenStatus{Uses: uses},
	}
}

func accountView(name, origin string, lastChange *metav1.Time, by string) accessv1.Account {
	a := accessv1.Account{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       accessv1.AccountSpec{Release: "pg", Username: name, Owner: "tenant", Format: "scram-sha-256"},
		Status:     accessv1.AccountStatus{Origin: origin, LastChange: lastChange, SecretResourceVersion: "42"},
	}
	if by != "" {
		a.Status.History = []accessv1.AccountOperation{{Operation: origin, At: *lastChange, By: by}}
	}
	return a
}

func withReady(a accessv1.Account, status, msg string, suspend bool) accessv1.Account {
	a.Status.Ready = &accessv1.AccountReady{Status: status, Reason: "Test", Message: msg}
	a.Spec.Suspend = suspend
	return a
}

func withApplied(a accessv1.Account, status, reason string) accessv1.Account {
	a.Status.Applied = &accessv1.AccountApplied{Status: status, Reason: reason, Message: "test"}
	return a
}

// printed runs printSummary and returns the output, split by section, and
// the number of sections that failed.
func printed(t *testing.T, s *summary) (sections map[string]string, failed int) {
	t.Helper()
	var out bytes.Buffer
	failed, err := printSummary(&out, s, now)
	if err != nil {
		t.Fatal(err)
	}
	sections = map[string]string{}
	for _, block := range strings.Split(out.String(), "\n\n") {
		title, _, _ := strings.Cut(block, " in ")
		sections[title] = strings.TrimSuffix(block, "\n")
	}
	return sections, failed
}

func TestSummaryPrinting(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "trust.credo.dev", Resource: "trustanchors"}, "", errors.New("RBAC"))
	notServed := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "access.credo.dev", Kind: "Account"}}
	cases := map[string]struct {
		summary *summary
		assert  func(g *WithT, sections map[string]string, failed int)
	}{
		"anchors without a projected certificate come first, then the soonest expiry, with durations": {
			summary: &summary{Anchors: section[trustv1.TrustAnchor]{Items: []trustv1.TrustAnchor{
				suspendedAnchor(anchor("late", at(3*365*24*time.Hour), metav1.ConditionTrue, "CA certificate projected")),
				anchor("soon", at(36*time.Hour), metav1.ConditionTrue, "CA certificate projected"),
				anchor("expired", at(-2*time.Hour), metav1.ConditionFalse, "CA certificate expired"),
				anchor("broken", nil, metav1.ConditionFalse, "refused: a private key\nwas found"),
			}}},
			assert: func(g *WithT, s map[string]string, failed int) {
				g.Expect(failed).To(BeZero())
				g.Expect(s["Trust anchors"]).To(MatchRegexp(`^Trust anchors in demo:
NAME\s+SOURCE\s+LEG\s+EXPIRES\s+SUSPENDED\s+READY\s+STATUS
broken\s+broken-ca\s+Label\s+-\s+False\s+False\s+refused: a private key was found
expired\s+expired-ca\s+Label\s+expired 120m ago\s+False\s+False\s+CA certificate expired
soon\s+soon-ca\s+Label\s+in 36h\s+False\s+True\s+CA certificate projected
late\s+late-ca\s+Label\s+in 3y\d*d?\s+True\s+True\s+CA certificate projected$`))
			},
		},
		"a section the user may not read says so in one line and hides none of the others": {
			summary: &summary{
				Anchors:   section[trustv1.TrustAnchor]{Err: forbidden},
				Workloads: section[enrollv1.Workload]{Items: []enrollv1.Workload{workload("w1", at(time.Hour), at(9*time.Hour), "enrolled")}},
			},
			assert: func(g *WithT, s map[string]string, failed int) {
				g.Expect(failed).To(BeZero())
				g.Expect(s["Trust anchors"]).To(Equal("Trust anchors in demo: not shown: you may not list trustanchors.trust.credo.dev in demo (forbidden by RBAC)"))
				g.Expect(s["Workloads"]).To(ContainSubstring("w1.example.org"))
				g.Expect(s["Accounts"]).To(Equal("Accounts in demo: none"))
				g.Expect(s["Join tokens that can still enroll"]).To(Equal("Join tokens that can still enroll in demo: none"))
			},
		},
		"an API the cluster does not serve is an answer, not a failure": {
			summary: &summary{Accounts: section[accessv1.Account]{Err: notServed}},
			assert: func(g *WithT, s map[string]string, failed int) {
				g.Expect(failed).To(BeZero())
				g.Expect(s["Accounts"]).To(Equal("Accounts in demo: not shown: this cluster does not serve accounts.access.credo.dev"))
			},
		},
		"any other error is printed in its section and counted as a failure": {
			summary: &summary{
				Accounts:  section[accessv1.Account]{Err: apierrors.NewServiceUnavailable("the access API is down")},
				Workloads: section[enrollv1.Workload]{Err: errors.New("connection refused")},
			},
			assert: func(g *WithT, s map[string]string, failed int) {
				g.Expect(failed).To(Equal(2))
				g.Expect(s["Accounts"]).To(Equal("Accounts in demo: could not be read: the access API is down"))
				g.Expect(s["Workloads"]).To(Equal("Workloads in demo: could not be read: connection refused"))
				g.Expect(s["Trust anchors"]).To(Equal("Trust anchors in demo: none"))
			},
		},
		"accounts show the origin, how long ago the password changed, by whom, whether the engine applied it, suspension and Ready": {
			summary: &summary{Accounts: section[accessv1.Account]{Items: []accessv1.Account{
				withReady(withApplied(accountView("pg-app", "Minted", at(-3*time.Minute), "jane"), "True", "RoleReconciled"), "True", "account Secret is in place", false),
				withReady(withApplied(accountView("pg-admin", "NotIssued", nil, ""), "Unknown", "NotIssued"), "True", "account Secret is in place", true),
				withReady(withApplied(accountView("pg-ro", "Minted", at(-2*time.Minute), "joe"), "False", "RoleCannotReconcile"), "False",
					"Secret pg.pg-ro.account was not created by credo;\nit is never written", false),
				accountView("pg-new", "NotIssued", nil, ""),
			}}},
			assert: func(g *WithT, s map[string]string, _ int) {
				g.Expect(s["Accounts"]).To(MatchRegexp(`^Accounts in demo:
NAME\s+RELEASE\s+USERNAME\s+OWNER\s+ORIGIN\s+LAST CHANGE\s+BY\s+APPLIED\s+SUSPENDED\s+READY\s+STATUS
pg-admin\s+pg\s+pg-admin\s+tenant\s+NotIssued\s+-\s+-\s+Unknown/NotIssued\s+True\s+True\s+account Secret is in place
pg-app\s+pg\s+pg-app\s+tenant\s+Minted\s+3m ago\s+jane\s+True/RoleReconciled\s+False\s+True\s+account Secret is in place
pg-new\s+pg\s+pg-new\s+tenant\s+NotIssued\s+-\s+-\s+-\s+False\s+-\s+-
pg-ro\s+pg\s+pg-ro\s+tenant\s+Minted\s+2m ago\s+joe\s+False/RoleCannotReconcile\s+False\s+False\s+Secret pg.pg-ro.account was not created by credo; it is never written$`))
			},
		},
		"workloads show when renewal is due and when they expire, soonest expiry first": {
			summary: &summary{Workloads: section[enrollv1.Workload]{Items: []enrollv1.Workload{
				workload("fresh", at(15*time.Hour), at(23*time.Hour), "enrolled; certificate issued"),
				workload("overdue", at(-2*time.Hour), at(time.Hour), "enrolled; certificate issued"),
				workload("lapsed", at(-9*time.Hour), at(-3*time.Hour), "certificate expired"),
				{ObjectMeta: metav1.ObjectMeta{Name: "new"}, Spec: enrollv1.WorkloadSpec{Policy: "web", Token: "t1"}},
			}}},
			assert: func(g *WithT, s map[string]string, _ int) {
				g.Expect(s["Workloads"]).To(MatchRegexp(`^Workloads in demo:
NAME\s+HOSTNAME\s+POLICY\s+RENEWAL DUE\s+EXPIRES\s+READY\s+STATUS
new\s+-\s+web\s+-\s+-\s+-\s+-
lapsed\s+lapsed.example.org\s+web\s+due 9h ago\s+expired 3h ago\s+True\s+certificate expired
overdue\s+overdue.example.org\s+web\s+due 120m ago\s+in 60m\s+True\s+enrolled; certificate issued
fresh\s+fresh.example.org\s+web\s+in 15h\s+in 23h\s+True\s+enrolled; certificate issued$`))
			},
		},
		"only join tokens that can still enroll are listed; the others are counted": {
			summary: &summary{Namespace: "demo", Tokens: section[enrollv1.JoinToken]{Items: []enrollv1.JoinToken{
				joinToken("later", 20*time.Hour, false, 0),
				joinToken("sooner", 2*time.Hour, false, 3),
				joinToken("revoked", 20*time.Hour, true, 1),
				joinToken("expired", -time.Minute, false, 0),
			}}},
			assert: func(g *WithT, s map[string]string, _ int) {
				g.Expect(s["Join tokens that can still enroll"]).To(MatchRegexp(`^Join tokens that can still enroll in demo:
ID\s+POLICY\s+EXPIRES\s+USES\s+LAST USED\s+DESCRIPTION
sooner\s+web\s+in 120m\s+3\s+-\s+batch sooner
later\s+web\s+in 20h\s+0\s+-\s+batch later
\(and 2 revoked or expired: kubectl credo token list -n demo\)$`))
			},
		},
		"when no join token can enroll, the section says none and counts the others": {
			summary: &summary{Tokens: section[enrollv1.JoinToken]{Items: []enrollv1.JoinToken{joinToken("revoked", time.Hour, true, 0)}}},
			assert: func(g *WithT, s map[string]string, _ int) {
				g.Expect(s["Join tokens that can still enroll"]).To(Equal(
					"Join tokens that can still enroll in demo: none (1 revoked or expired: kubectl credo token list -n demo)"))
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			tc.summary.Namespace = "demo"
			sections, failed := printed(t, tc.summary)
			g.Expect(sections).To(HaveLen(4), "every section is printed, whatever the others hold")
			tc.assert(g, sections, failed)
		})
	}
}

// A join token's record holds the hash of its secret; the summary prints
// neither.
func TestSummaryPrintsNoTokenHash(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	_, err := printSummary(&out, &summary{Namespace: "demo", Tokens: section[enrollv1.JoinToken]{
		Items: []enrollv1.JoinToken{joinToken("t1", time.Hour, false, 0)},
	}}, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.String()).To(ContainSubstring("t1"))
	g.Expect(out.String()).NotTo(ContainSubstring(strings.TrimPrefix(secretHash, "sha256:")[:16]))
}
