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
	"net/http"
	"strings"
	"testing"
	"time"

	fluxevents "github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// drain returns the events recorded so far.
func drain(rec *fluxevents.FakeRecorder) []corev1.Event {
	var out []corev1.Event
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Guessing at an existing token's secret is refused, and the attempt that
// uses up the address's budget is recorded once on that JoinToken, with the
// policy, the token, the refusal and the address, and never the secret.
func TestGuessingAtAKnownTokenIsRecordedOnceWhenRateLimited(t *testing.T) {
	rec := fluxevents.NewFakeRecorder(32, true)
	base := startServer(t, withFailureLimit(time.Hour, 2), withRecorder(rec))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)
	other, _ := jointoken.New()
	guess := jointoken.Token{ID: jt.Name, Secret: other.Secret}.String()

	c := httpClient(nil)
	for i := range 2 {
		status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: guess}, nil)
		expectRefused(t, "a wrong secret", status, e, http.StatusUnauthorized, enrollapi.ReasonTokenInvalid)
		if i == 0 && len(drain(rec)) != 0 {
			t.Fatal("an event before the budget is used up")
		}
	}
	status, e := post(t, c, base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: guess}, nil)
	expectRefused(t, "a limited address", status, e, http.StatusTooManyRequests, enrollapi.ReasonRateLimited)

	var limited []corev1.Event
	for _, ev := range drain(rec) {
		if ev.Reason == enrollv1.TokenAttemptsRateLimitedReason {
			limited = append(limited, ev)
		}
		for k, v := range ev.Annotations {
			if strings.Contains(k+v+ev.Message, other.Secret) || strings.Contains(k+v+ev.Message, token) {
				t.Fatal("a token secret in an event")
			}
		}
	}
	if len(limited) != 1 {
		t.Fatalf("%d TokenAttemptsRateLimited events, want exactly one", len(limited))
	}
	ev := limited[0]
	if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.Kind != "JoinToken" || ev.InvolvedObject.Name != jt.Name ||
		ev.InvolvedObject.Namespace != ns {
		t.Fatalf("event %s on %s %s/%s, want a Warning on JoinToken %s/%s", ev.Type, ev.InvolvedObject.Kind,
			ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, ns, jt.Name)
	}
	want := map[string]string{
		enrollv1.EventPolicyKey:  p.Name,
		enrollv1.EventTokenKey:   jt.Name,
		enrollv1.EventRefusalKey: enrollapi.ReasonRateLimited,
	}
	for k, v := range want {
		if ev.Annotations[k] != v {
			t.Fatalf("metadata %s = %q, want %q", k, ev.Annotations[k], v)
		}
	}
	if !strings.HasPrefix(ev.Annotations[enrollv1.EventAddressKey], "127.0.0.1") {
		t.Fatalf("metadata %s = %q, want the client address", enrollv1.EventAddressKey, ev.Annotations[enrollv1.EventAddressKey])
	}
}

// A refused enrollment is recorded on the token with the refusal reason.
func TestRefusedEnrollmentEventCarriesTheRefusal(t *testing.T) {
	rec := fluxevents.NewFakeRecorder(32, true)
	base := startServer(t, withRecorder(rec))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads,
		enrollapi.EnrollRequest{Token: token, Hostname: "not a hostname"}, nil)
	expectRefused(t, "a bad hostname", status, e, http.StatusBadRequest, enrollapi.ReasonBadRequest)
	for _, ev := range drain(rec) {
		if ev.Reason == enrollv1.EnrollmentRefusedReason && ev.InvolvedObject.Name == jt.Name {
			if ev.Annotations[enrollv1.EventRefusalKey] != enrollapi.ReasonBadRequest || ev.Annotations[enrollv1.EventPolicyKey] != p.Name {
				t.Fatalf("metadata %v, want refusal %s and policy %s", ev.Annotations, enrollapi.ReasonBadRequest, p.Name)
			}
			return
		}
	}
	t.Fatal("no EnrollmentRefused event on the token")
}
