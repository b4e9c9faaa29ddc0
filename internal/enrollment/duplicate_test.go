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
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxevents "github.com/fluxcd/pkg/runtime/events"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

// recordDuplicates makes a policy only record duplicate identities: the
// latest renewal supersedes, as before detection.
func recordDuplicates(spec enrollv1.EnrollmentPolicySpec) enrollv1.EnrollmentPolicySpec {
	spec.OnDuplicate = enrollv1.DuplicateRecord
	return spec
}

// renewAs renews w presenting cert, with the certificate request csr and
// what the agent says of its host.
func renewAs(t *testing.T, base string, w *enrolled, cert *tls.Certificate, csr, hostname, bootID string) (int, *enrollapi.Error, *enrollapi.CertificateResponse) {
	t.Helper()
	return renewWith(t, base, w, cert, enrollapi.RenewalRequest{CSR: csr, Host: &enrollapi.Host{Hostname: hostname, BootID: bootID}})
}

const (
	bootOriginal = "7f1d3c8e-0000-4000-8000-000000000001"
	bootClone    = "7f1d3c8e-0000-4000-8000-000000000002"
)

// Two copies of one host share the key and the certificate (a cloned
// image). The original renews first; the clone then renews with the
// certificate the original replaced, still valid, and a request of its
// own: a duplicate identity, recorded on the Workload with both serials,
// addresses and hosts, and handled as the policy's onDuplicate says.
func TestADuplicateIdentityIsRecordedAndHandledAsThePolicySays(t *testing.T) {
	for _, tt := range []struct {
		action enrollv1.DuplicateAction
		// cloneReason is the clone's refusal; originalReason the original's
		// next renewal's, empty when it renews.
		cloneReason, originalReason string
	}{
		{action: "", cloneReason: enrollapi.ReasonDuplicateIdentity, originalReason: enrollapi.ReasonDuplicateIdentity},
		{action: enrollv1.DuplicateDeny, cloneReason: enrollapi.ReasonDuplicateIdentity, originalReason: enrollapi.ReasonDenied},
		{action: enrollv1.DuplicateRecord, cloneReason: enrollapi.ReasonNotCurrent},
	} {
		name := string(tt.action)
		if name == "" {
			name = "default (ForceReenroll)"
		}
		t.Run(name, func(t *testing.T) {
			rec := fluxevents.NewFakeRecorder(64, true)
			base := startServer(t, withRecorder(rec))
			ns := env.NewNamespace(t)
			spec := policySpec(time.Hour, time.Hour)
			spec.OnDuplicate = tt.action
			p := newPolicy(t, ns, spec)
			token, _ := newToken(t, p, time.Hour)
			w := enroll(t, base, token, nil)
			clone := w.tlsCert()
			// renewFrom renews w presenting cert, with a new request of w's
			// key, from vm-1 booted as bootID.
			renewFrom := func(cert *tls.Certificate, bootID string) (int, *enrollapi.Error, *enrollapi.CertificateResponse) {
				t.Helper()
				return renewAs(t, base, w, cert, workloadCSR(t, w.key, w.uuid), "vm-1.example.org", bootID)
			}

			status, e, resp := renewFrom(w.tlsCert(), bootOriginal)
			if e != nil {
				t.Fatalf("the original's renewal: %d %s", status, e)
			}
			current := parseCert(t, resp.Certificate)

			status, e, _ = renewFrom(clone, bootClone)
			expectRefused(t, "the clone's renewal", status, e, 403, tt.cloneReason)
			if !e.NeedsReenrollment() {
				t.Fatalf("the clone is not told to enroll again: %s", e)
			}
			if strings.Contains(e.Message, bootOriginal) {
				t.Fatalf("the refusal tells the presenter about the holder: %s", e.Message)
			}

			wl := getWorkload(t, ns, w.uuid)
			d := wl.Status.Duplicate
			want := enrollv1.DuplicateAction(p.GetOnDuplicate())
			if d == nil || d.Action != want || d.Count != 1 ||
				d.Current.Serial != fmt.Sprintf("%x", current.SerialNumber) || d.Current.BootID != bootOriginal || d.Current.Address != "127.0.0.1" ||
				d.Presented.Serial != fmt.Sprintf("%x", w.cert.SerialNumber) || d.Presented.BootID != bootClone || d.Presented.Address != "127.0.0.1" ||
				d.Presented.Hostname != "vm-1.example.org" {
				t.Fatalf("the duplicate record is %+v", d)
			}
			cond := apimeta.FindStatusCondition(wl.Status.Conditions, enrollv1.DuplicateIdentityCondition)
			if cond == nil || cond.Status != "True" || cond.Reason != string(want) ||
				!strings.Contains(cond.Message, d.Current.Serial) || !strings.Contains(cond.Message, d.Presented.Serial) || !strings.Contains(cond.Message, bootClone) {
				t.Fatalf("the DuplicateIdentity condition is %+v", cond)
			}
			var warned bool
			for _, ev := range drain(rec) {
				warned = warned || (ev.Reason == enrollv1.DuplicateIdentityEventReason && ev.Type == "Warning")
			}
			if !warned {
				t.Fatal("no DuplicateIdentity Warning event")
			}

			w.cert = current
			status, e, _ = renewFrom(w.tlsCert(), bootOriginal)
			switch {
			case tt.originalReason == "" && e != nil:
				t.Fatalf("the original no longer renews under %s: %d %s", want, status, e)
			case tt.originalReason != "":
				expectRefused(t, "the original's next renewal", status, e, 403, tt.originalReason)
			}
			switch want {
			case enrollv1.DuplicateForceReenroll:
				waitFor(t, func() bool {
					return conditions.GetReason(getWorkload(t, ns, w.uuid), meta.ReadyCondition) == enrollv1.DuplicateIdentityReason
				})
			case enrollv1.DuplicateDeny:
				if den := getWorkload(t, ns, w.uuid).Spec.Denied; den == nil || den.By != enrollment.DeniedBy {
					t.Fatalf("the workload is not denied by the enrollment server: %+v", den)
				}
				// Lifting the denial lets the holder of the latest certificate renew.
				setDenied(t, ns, w.uuid, nil)
				if status, e, _ := renewFrom(w.tlsCert(), bootOriginal); e != nil {
					t.Fatalf("the original after the denial was lifted: %d %s", status, e)
				}
			}
		})
	}
}

// A renewal whose answer was lost is sent again, the same request byte for
// byte, with the certificate it replaced: it gets the certificate already
// issued, and nothing is recorded twice. Any other request with that
// certificate (another key, or the same key signing anew) is a duplicate,
// and so is the same request after the retry window.
func TestALostRenewalAnswerIsAnsweredAgainWithinTheWindow(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, 3*time.Hour)

	for _, tt := range []struct {
		name   string
		csr    func(w *enrolled, lost string) string
		after  time.Duration
		reason string
	}{
		{name: "the same request", csr: func(_ *enrolled, lost string) string { return lost }},
		{name: "the same key signing a new request", csr: func(w *enrolled, _ string) string { return workloadCSR(t, w.key, w.uuid) },
			reason: enrollapi.ReasonDuplicateIdentity},
		{name: "another key", csr: func(w *enrolled, _ string) string { return workloadCSR(t, testpki.Key(t), w.uuid) },
			reason: enrollapi.ReasonDuplicateIdentity},
		// Its sender holds the agent's record of the request: not a
		// duplicate, but too late to be answered again.
		{name: "the same request after the window", csr: func(_ *enrolled, lost string) string { return lost },
			after: enrollment.DefaultRenewalRetryWindow + time.Minute, reason: enrollapi.ReasonNotCurrent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clockOffset.Store(0)
			w := enroll(t, base, token, nil)
			lost := workloadCSR(t, w.key, w.uuid)
			status, e, first := renewAs(t, base, w, w.tlsCert(), lost, "vm-1.example.org", bootOriginal)
			if e != nil {
				t.Fatalf("the renewal whose answer is lost: %d %s", status, e)
			}
			clockOffset.Store(int64(tt.after))
			status, e, again := renewAs(t, base, w, w.tlsCert(), tt.csr(w, lost), "vm-1.example.org", bootOriginal)
			if tt.reason != "" {
				expectRefused(t, "the second request", status, e, 403, tt.reason)
				if d := getWorkload(t, ns, w.uuid).Status.Duplicate; (d != nil) != (tt.reason == enrollapi.ReasonDuplicateIdentity) {
					t.Fatalf("duplicate record %+v after a %s refusal", d, tt.reason)
				}
				return
			}
			if e != nil {
				t.Fatalf("the retry: %d %s", status, e)
			}
			if again.Certificate != first.Certificate || again.NotAfter != first.NotAfter || again.Bundle == "" {
				t.Fatal("the retry did not get the certificate already issued")
			}
			if wl := getWorkload(t, ns, w.uuid); wl.Status.Renewals != 1 || wl.Status.Duplicate != nil {
				t.Fatalf("the retry was recorded as a renewal or a duplicate: %+v", wl.Status)
			}
		})
	}
}

// Step 2 sent again with the same request, its answer lost, gets the
// certificate issued; another request is refused.
func TestALostEnrollmentAnswerIsAnsweredAgain(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	c := httpClient(nil)
	step1 := register(t, base, token)
	key := testpki.Key(t)
	req := enrollapi.CertificateRequest{Token: token, CSR: workloadCSR(t, key, step1.UUID)}
	var first, again enrollapi.CertificateResponse
	if status, e := post(t, c, base+enrollapi.PathCertificate(step1.UUID), req, &first); e != nil {
		t.Fatalf("step 2: %d %s", status, e)
	}
	if status, e := post(t, c, base+enrollapi.PathCertificate(step1.UUID), req, &again); e != nil || again.Certificate != first.Certificate {
		t.Fatalf("step 2 again with the same request: %d %v", status, e)
	}
	req.CSR = workloadCSR(t, key, step1.UUID)
	status, e := post(t, c, base+enrollapi.PathCertificate(step1.UUID), req, nil)
	expectRefused(t, "step 2 again with another request", status, e, 409, enrollapi.ReasonBadRequest)
}

// What an agent says of its host is a record, not a check: a value that
// does not fit it is left out, and the renewal goes through.
func TestHostMetadataThatDoesNotFitIsLeftOutNotRefused(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	status, e, _ := renewAs(t, base, w, w.tlsCert(), workloadCSR(t, w.key, w.uuid), "not a host name!", strings.Repeat("z", 100))
	if e != nil {
		t.Fatalf("a renewal with host metadata that does not fit the record: %d %s", status, e)
	}
	got := getWorkload(t, ns, w.uuid).Status.IssuedTo
	if got == nil || got.Hostname != "" || got.BootID != "" || got.Address != "127.0.0.1" || got.At == nil {
		t.Fatalf("issuedTo is %+v, want the address and time only", got)
	}
}
