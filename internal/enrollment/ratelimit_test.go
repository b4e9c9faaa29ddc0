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

package enrollment_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/agent"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// An id no JoinToken has is answered exactly as a wrong secret is (401
// TokenInvalid, no internal error text), and it costs the address an
// attempt: a scanner of ids is limited like a guesser of secrets.
func TestAnUnknownTokenIDIsTheSame401AsAWrongSecretAndIsCounted(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 2))
	c := httpClient(nil)
	for i := range 2 {
		unknown, _ := jointoken.New()
		status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: unknown.String()}, nil)
		expectRefused(t, fmt.Sprintf("unknown id %d", i), status, e, http.StatusUnauthorized, enrollapi.ReasonTokenInvalid)
		if e.Message != "the join token is not valid" {
			t.Fatalf("unknown id answered %q, want the wrong-secret answer", e.Message)
		}
	}
	unknown, _ := jointoken.New()
	status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: unknown.String()}, nil)
	expectRefused(t, "a third unknown id", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)
}

// Failures from an address (hosts behind one NAT, or a scanner there) do
// not lock out a valid token from the same address: the budget is kept per
// address and token id. Guessing at one token limits that token only.
func TestAValidTokenIsNotLimitedByOtherFailuresFromItsAddress(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 2))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	guessed, gjt := newToken(t, p, time.Hour)
	c := httpClient(nil)
	step1 := func(tok string) (int, *enrollapi.Error) {
		return post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: tok}, nil)
	}
	// Unknown ids and malformed tokens use up the address's budget for ids
	// that name no token.
	for range 3 {
		unknown, _ := jointoken.New()
		_, _ = step1(unknown.String())
	}
	status, e := step1("malformed")
	expectRefused(t, "malformed token from a limited address", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)
	// Wrong secrets for one token use up that token's budget at the address.
	other, _ := jointoken.New()
	for range 3 {
		_, _ = step1(gjt.Name + "." + other.Secret)
	}
	status, e = step1(guessed)
	expectRefused(t, "the guessed token from the guessing address", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)

	if status, e := step1(token); e != nil {
		t.Fatalf("a valid token from an address with failures was refused: %d %s", status, e)
	}
}

// Refusals of a limited address are logged, but not once per request: a
// scanner cannot flood the log.
func TestRateLimitedRefusalsAreLoggedAtABoundedRate(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 1))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	_, jt := newToken(t, p, time.Hour)
	other, _ := jointoken.New()
	guess := jt.Name + "." + other.Secret
	c := httpClient(nil)
	before := strings.Count(env.Logs.String(), "rate limited")
	const requests = 40
	for range requests {
		_, _ = post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: guess}, nil)
	}
	logged := strings.Count(env.Logs.String(), "rate limited") - before
	if logged == 0 || logged > 10 {
		t.Fatalf("%d rate-limited requests logged %d lines, want between 1 and 10", requests-1, logged)
	}
}

// An agent whose join token was deleted is told the token is not valid and
// stops for a new enrollment (credo-agent exits 3), instead of retrying a
// 503 forever.
func TestAnAgentWhoseTokenWasDeletedStopsForReenrollment(t *testing.T) {
	base := startServer(t, withFailureLimit(time.Hour, 10))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)
	if err := k8s.Delete(context.Background(), jt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var got enrollv1.JoinToken
		return apierrors.IsNotFound(reader.Get(context.Background(), keyOf(jt), &got))
	})
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, testCA.ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{
		Server: base, CAFile: caFile, Token: token, StateDir: filepath.Join(dir, "state"), Hostname: "vm-1",
		RetryInitial: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, BundlePollInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = a.Run(ctx)
	if !errors.Is(err, agent.ErrReenrollmentRequired) {
		t.Fatalf("the agent did not stop for re-enrollment: %v", err)
	}
	var apiErr *enrollapi.Error
	if !errors.As(err, &apiErr) || apiErr.Reason != enrollapi.ReasonTokenInvalid {
		t.Fatalf("the agent stopped with %v, want %s", err, enrollapi.ReasonTokenInvalid)
	}
}
