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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/benchcost"
	"github.com/credo-dev/credo/tests/testenv"
)

// tokenReads counts the JoinToken reads kube-apiserver served per
// benchcost operation: its lists, and its gets, because kube-apiserver
// reports a list by a metadata.name field selector (the server's uncached
// lookup) as a GET. Gets by others (a reconciler) count too, so it is an
// upper bound of the server's lookups.
func tokenReads(c benchcost.Cost) float64 {
	resource := "jointokens." + enrollv1.GroupVersion.Group
	return c.Requests["LIST "+resource] + c.Requests["GET "+resource]
}

// withLookups sets the budget of uncached token lookups.
func withLookups(perSecond float64, burst int) func(*serverSetup) {
	return func(s *serverSetup) { s.opts.TokenLookupsPerSecond, s.opts.TokenLookupsBurst = perSecond, burst }
}

// withUnknownTokenTTL sets how long an unknown token id is remembered.
func withUnknownTokenTTL(ttl time.Duration) func(*serverSetup) {
	return func(s *serverSetup) { s.opts.UnknownTokenTTL = ttl }
}

// clientFrom is httpClient(nil) whose connections come from the loopback
// address ip (any of 127.0.0.0/8 on Linux): the server sees another client.
func clientFrom(ip string) *http.Client {
	c := httpClient(nil)
	tr := c.Transport.(*http.Transport)
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
	return c
}

// answer is a refusal as the agent sees it, with its Retry-After.
type answer struct {
	status     int
	reason     string
	message    string
	retryAfter int
}

// step1 sends step 1 with token and returns the answer; nil err and a zero
// reason for a success.
func step1(c *http.Client, base, token string) (answer, error) {
	b, _ := json.Marshal(enrollapi.EnrollRequest{Token: token})
	resp, err := c.Post(base+enrollapi.PathWorkloads, "application/json", bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode}
	a.retryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode/100 != 2 {
		var e enrollapi.Error
		if err := json.Unmarshal(data, &e); err != nil {
			return a, fmt.Errorf("a %d answer that is not an enrollapi.Error", resp.StatusCode)
		}
		a.reason, a.message = e.Reason, e.Message
	}
	return a, nil
}

// flood sends perAddress step-1 requests from each of addresses loopback
// addresses (127.0.0.10 on), concurrently across addresses, each with the
// token next returns, and returns every answer.
func flood(t *testing.T, base string, addresses, perAddress int, next func() string) []answer {
	t.Helper()
	var (
		mu      sync.Mutex
		answers []answer
		errs    []error
		wg      sync.WaitGroup
	)
	for i := range addresses {
		ip := fmt.Sprintf("127.0.0.%d", 10+i)
		tokens := make([]string, perAddress)
		for j := range tokens {
			tokens[j] = next()
		}
		wg.Go(func() {
			c := clientFrom(ip)
			defer c.CloseIdleConnections()
			for _, tok := range tokens {
				a, err := step1(c, base, tok)
				mu.Lock()
				answers, errs = append(answers, a), append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return answers
}

// Unknown token ids from many addresses, each within its own budget of
// failed attempts, cost kube-apiserver at most the server's budget of
// uncached lookups; beyond it they are answered 429 TokenLookupsLimited
// with a Retry-After (counted in credo_enrollment_refused_total), and a
// valid token still enrolls meanwhile. Seen failing before the budget:
// 1,000 answers 401 and 1,000 JoinToken lists.
func TestUnknownTokenIDsFromManyAddressesCostABoundedNumberOfLookups(t *testing.T) {
	g := NewWithT(t)
	const (
		addresses  = 100
		perAddress = enrollment.DefaultFailedAttemptsBurst // each address stays within its own budget
		perSecond  = 2
		burst      = 10
	)
	base := startServer(t,
		withFailureLimit(enrollment.DefaultFailedAttemptsEvery, enrollment.DefaultFailedAttemptsBurst),
		withLookups(perSecond, burst))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	valid, _ := newToken(t, p, time.Hour)

	var secrets []string
	next := func() string {
		tok, err := jointoken.New()
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok.Secret)
		return tok.String()
	}
	limitedBefore := testenv.CounterValue(g, "credo_enrollment_refused_total", map[string]string{"reason": enrollapi.ReasonTokenLookupsLimited})
	meter := benchcost.Start(t, env.Config)
	start := time.Now()
	answers := flood(t, base, addresses, perAddress, next)
	elapsed := time.Since(start)
	lists := tokenReads(meter.Stop(t, 1))

	var invalid, limited int
	for _, a := range answers {
		switch {
		case a.status == http.StatusUnauthorized && a.reason == enrollapi.ReasonTokenInvalid:
			invalid++
		case a.status == http.StatusTooManyRequests && a.reason == enrollapi.ReasonTokenLookupsLimited:
			limited++
			if a.retryAfter < 1 || !strings.Contains(a.message, "retry") {
				t.Fatalf("a 429 with Retry-After %d and message %q, want a Retry-After and a message saying to retry", a.retryAfter, a.message)
			}
		default:
			t.Fatalf("an unknown token id answered %d %s %q", a.status, a.reason, a.message)
		}
	}
	// The budget holds burst lookups, then refills perSecond; a list or two
	// of the suite's own (an informer's relist) is allowed for.
	bound := float64(burst) + math.Ceil(perSecond*elapsed.Seconds()) + 2
	t.Logf("%d requests from %d addresses in %s: %d answered 401, %d answered 429; kube-apiserver served %.0f JoinToken reads (bound %.0f)",
		len(answers), addresses, elapsed.Round(time.Millisecond), invalid, limited, lists, bound)
	if lists < float64(invalid) {
		t.Fatalf("%d unknown ids were answered 401 after a lookup, but only %.0f JoinToken reads were counted", invalid, lists)
	}
	if lists > bound {
		t.Fatalf("%d unknown token ids cost %.0f uncached JoinToken reads in %s, want at most %.0f", len(answers), lists, elapsed, bound)
	}
	if float64(limited) < float64(len(answers))-bound {
		t.Fatalf("%d of %d unknown token ids were answered 429, want all beyond the budget of %.0f", limited, len(answers), bound)
	}
	g.Expect(testenv.CounterValue(g, "credo_enrollment_refused_total", map[string]string{"reason": enrollapi.ReasonTokenLookupsLimited})-limitedBefore).
		To(BeNumerically("==", limited), "every 429 is counted under its reason")

	// A token the server holds needs no lookup: it enrolls with the budget spent.
	meter = benchcost.Start(t, env.Config)
	if w := enroll(t, base, valid, nil); w.cert == nil {
		t.Fatal("no certificate")
	}
	if n := tokenReads(meter.Stop(t, 1)); n > 0 {
		t.Fatalf("enrolling with a cached token read JoinTokens %.0f times", n)
	}
	logs := env.Logs.String()
	for _, secret := range append(secrets, valid[strings.Index(valid, enrollapi.TokenSeparator)+1:]) {
		if strings.Contains(logs, secret) {
			t.Fatal("a token secret is in the log")
		}
	}
}

// One unknown token id sent again and again (agents whose token was
// deleted, retrying) costs one JoinToken list while it is remembered.
func TestAnUnknownTokenIDSentAgainIsNotLookedUpAgain(t *testing.T) {
	base := startServer(t)
	unknown, _ := jointoken.New()
	meter := benchcost.Start(t, env.Config)
	answers := flood(t, base, 1, 1, unknown.String)
	answers = append(answers, flood(t, base, 20, 10, unknown.String)...)
	lists := tokenReads(meter.Stop(t, 1))
	for _, a := range answers {
		if a.status != http.StatusUnauthorized || a.reason != enrollapi.ReasonTokenInvalid {
			t.Fatalf("an unknown token id answered %d %s %q, want 401 %s", a.status, a.reason, a.message, enrollapi.ReasonTokenInvalid)
		}
	}
	if lists < 1 || lists > 2 { // one, and one of the suite's own at most
		t.Fatalf("one unknown token id sent %d times cost %.0f JoinToken reads, want 1", len(answers), lists)
	}
}

// An id refused as unknown is remembered, but only for ids the cache does
// not hold: a JoinToken created with that id afterwards enrolls as soon as
// the cache holds it, however long the id would be remembered.
func TestATokenCreatedAfterItsIDWasRefusedEnrollsOnceCached(t *testing.T) {
	base := startServer(t, withUnknownTokenTTL(time.Hour))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	tok, err := jointoken.New()
	if err != nil {
		t.Fatal(err)
	}
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: tok.String()}, nil)
	expectRefused(t, "a token id before its JoinToken exists", status, e, http.StatusUnauthorized, enrollapi.ReasonTokenInvalid)

	jt := &enrollv1.JoinToken{
		ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: ns},
		Spec: enrollv1.JoinTokenSpec{Policy: p.Name, SecretHash: tok.Hash(),
			ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))},
	}
	if err := k8s.Create(context.Background(), jt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var got enrollv1.JoinToken
		return reader.Get(context.Background(), client.ObjectKeyFromObject(jt), &got) == nil
	})
	if w := enroll(t, base, tok.String(), nil); w.cert == nil {
		t.Fatal("no certificate")
	}
}

// The lookup limits are flags with safe defaults; a flag that would turn
// the budget off, or remember ids in no room, is refused.
func TestTheLookupLimitsAreValidatedAsFlags(t *testing.T) {
	cases := map[string]struct {
		mutate func(*enrollment.Options)
		flag   string
	}{
		"the defaults are valid":                   {mutate: func(*enrollment.Options) {}},
		"no remembered ids at all is valid":        {mutate: func(o *enrollment.Options) { o.UnknownTokenTTL = 0 }},
		"a budget of no lookups per second is not": {mutate: func(o *enrollment.Options) { o.TokenLookupsPerSecond = 0 }, flag: enrollment.FlagTokenLookupsPerSecond},
		"an infinite budget is not":                {mutate: func(o *enrollment.Options) { o.TokenLookupsPerSecond = math.Inf(1) }, flag: enrollment.FlagTokenLookupsPerSecond},
		"a burst of no lookup is not":              {mutate: func(o *enrollment.Options) { o.TokenLookupsBurst = 0 }, flag: enrollment.FlagTokenLookupsBurst},
		"a negative TTL is not":                    {mutate: func(o *enrollment.Options) { o.UnknownTokenTTL = -time.Second }, flag: enrollment.FlagUnknownTokenTTL},
		"remembering ids in no room is not":        {mutate: func(o *enrollment.Options) { o.UnknownTokenCacheSize = 0 }, flag: enrollment.FlagUnknownTokenCacheSize},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := enrollment.NewOptions()
			tc.mutate(&o)
			err := o.Validate()
			switch {
			case tc.flag == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.flag != "" && (err == nil || !strings.Contains(err.Error(), "--"+tc.flag)):
				t.Fatalf("got %v, want an error naming --%s", err, tc.flag)
			}
		})
	}
}
