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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

func TestTokenCreateRefusesToPrintIntoAPipeWithoutAnOutputFlag(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	err := run([]string{"token", "create", "agents", "--kubeconfig", "/nonexistent"}, strings.NewReader(""), &out)
	g.Expect(err).To(MatchError(ContainSubstring("stdout is not a terminal")))
	g.Expect(out.Len()).To(BeZero())
}

func TestTokenOutputs(t *testing.T) {
	req := &accessv1.JoinTokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a"},
		Status: accessv1.JoinTokenRequestStatus{Token: "abc.def", ID: "abc", ExpiresAt: metav1.Unix(0, 0)}}
	for output, want := range map[string]string{
		"env":  "CREDO_JOIN_TOKEN='abc.def'\nCREDO_JOIN_TOKEN_ID='abc'\n",
		"json": "\"token\": \"abc.def\"",
		"yaml": "token: abc.def\n",
		"":     "Revoke it with: kubectl credo token revoke abc -n tenant-a\n",
	} {
		g := NewWithT(t)
		var out bytes.Buffer
		g.Expect(printToken(&out, output, req)).To(Succeed())
		g.Expect(out.String()).To(ContainSubstring(want), "output %q", output)
	}
}

func TestTokenListShowsStateAndUses(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	used := metav1.NewTime(now.Add(-time.Minute))
	items := []enrollv1.JoinToken{
		{ObjectMeta: metav1.ObjectMeta{Name: "active1"}, Spec: enrollv1.JoinTokenSpec{Policy: "agents", ExpiresAt: metav1.NewTime(now.Add(time.Hour))},
			Status: enrollv1.JoinTokenStatus{Uses: 3, LastUsedAt: &used, LastWorkload: "uuid-1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "expired1"}, Spec: enrollv1.JoinTokenSpec{Policy: "agents", ExpiresAt: metav1.NewTime(now.Add(-time.Hour))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "revoked1"}, Spec: enrollv1.JoinTokenSpec{Policy: "other", Revoked: true, ExpiresAt: metav1.NewTime(now.Add(time.Hour))}},
	}
	var out bytes.Buffer
	g.Expect(printTokens(&out, items, "", now)).To(Succeed())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	g.Expect(lines).To(HaveLen(4))
	g.Expect(lines[1]).To(MatchRegexp(`^expired1\s+agents\s+Expired`))
	g.Expect(out.String()).To(MatchRegexp(`active1\s+agents\s+Active\s+\S+\s+3\s+\S+\s+uuid-1`))
	g.Expect(out.String()).To(MatchRegexp(`revoked1\s+other\s+Revoked`))

	out.Reset()
	g.Expect(printTokens(&out, items, "other", now)).To(Succeed())
	g.Expect(strings.Split(strings.TrimSpace(out.String()), "\n")).To(HaveLen(2), "--policy filters")
}

// A --lifetime that is not positive is refused before anything is sent:
// it never falls back to the policy's lifetime.
func TestTokenCreateRefusesALifetimeThatIsNotPositive(t *testing.T) {
	for _, lifetime := range []string{"-1h", "0s", "0"} {
		g := NewWithT(t)
		var out bytes.Buffer
		err := run([]string{"token", "create", "agents", "--lifetime", lifetime, "-o", "json", "--kubeconfig", "/nonexistent"}, strings.NewReader(""), &out)
		g.Expect(err).To(MatchError(MatchRegexp(`^--lifetime \S+ is not positive: give a positive duration`)), "--lifetime %s", lifetime)
		g.Expect(exitCode(err)).To(Equal(1))
		g.Expect(out.Len()).To(BeZero())
	}
}
