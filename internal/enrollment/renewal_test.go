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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/testpki"
)

func TestOnlyTheCurrentCertificateRenews(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	// Record keeps v1's rule, the latest renewal supersedes: the older
	// certificate's holder alone is refused (duplicate_test.go has the rest).
	p := newPolicy(t, ns, recordDuplicates(policySpec(time.Hour, time.Hour)))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	old := w.tlsCert()

	status, e, resp := renew(t, base, w, old)
	if e != nil {
		t.Fatalf("renewal with the current certificate: %d %s", status, e)
	}
	next := parseCert(t, resp.Certificate)
	if next.SerialNumber.Cmp(w.cert.SerialNumber) == 0 || len(next.URIs) != 1 || next.URIs[0].String() != enrollapi.WorkloadURI(w.uuid).String() {
		t.Fatal("the renewed certificate is not a new certificate for the same identity")
	}
	wl := getWorkload(t, ns, w.uuid)
	if wl.Status.Serial != fmt.Sprintf("%x", next.SerialNumber) || wl.Status.Renewals != 1 || wl.Status.LastRenewal == nil {
		t.Fatalf("the registry does not name the renewed certificate: %+v", wl.Status)
	}

	// A copy of the older certificate is useless for renewal.
	status, e, _ = renew(t, base, w, old)
	expectRefused(t, "renewal with the older certificate", status, e, 403, enrollapi.ReasonNotCurrent)
	if !e.NeedsReenrollment() {
		t.Fatal("an older certificate's refusal does not ask for re-enrollment")
	}
	w.cert = next
	if status, e, _ := renew(t, base, w, w.tlsCert()); e != nil {
		t.Fatalf("the current certificate no longer renews after a refused older one: %d %s", status, e)
	}
}

func TestExpiredCertificateRenewsWithinTheGraceOnly(t *testing.T) {
	base := startServer(t)
	t.Cleanup(func() { clockOffset.Store(0) })
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, 30*time.Minute))
	token, _ := newToken(t, p, 3*time.Hour)
	within := enroll(t, base, token, nil)
	beyond := enroll(t, base, token, nil)

	clockOffset.Store(int64(70 * time.Minute))
	status, e, resp := renew(t, base, within, within.tlsCert())
	if e != nil {
		t.Fatalf("an expired certificate within the grace did not renew: %d %s", status, e)
	}
	if na := parseCert(t, resp.Certificate).NotAfter; !na.After(time.Now().Add(2 * time.Hour)) {
		t.Fatalf("the renewed certificate ends at %s, not an hour after the server's now", na)
	}

	clockOffset.Store(int64(95 * time.Minute))
	status, e, _ = renew(t, base, beyond, beyond.tlsCert())
	expectRefused(t, "renewal beyond the grace", status, e, 403, enrollapi.ReasonRenewalGraceOver)
	if !e.NeedsReenrollment() {
		t.Fatal("renewal beyond the grace does not ask for re-enrollment")
	}
}

func TestDeletedWorkloadRenewsNothing(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	if err := k8s.Delete(context.Background(), getWorkload(t, ns, w.uuid)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		var list enrollv1.WorkloadList
		_ = reader.List(context.Background(), &list)
		for _, it := range list.Items {
			if it.Name == w.uuid {
				return false
			}
		}
		return true
	})
	status, e, _ := renew(t, base, w, w.tlsCert())
	expectRefused(t, "renewal of a deleted workload", status, e, 404, enrollapi.ReasonWorkloadNotFound)
	if !e.NeedsReenrollment() {
		t.Fatal("a deleted workload is not told to enroll again")
	}
}

func TestRenewalIsAuthenticatedByTheWorkloadsOwnCertificate(t *testing.T) {
	base := startServer(t)
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	a := enroll(t, base, token, nil)
	b := enroll(t, base, token, nil)

	status, e, _ := renew(t, base, b, nil)
	expectRefused(t, "no client certificate", status, e, 401, enrollapi.ReasonUnauthenticated)
	status, e, _ = renew(t, base, b, a.tlsCert())
	expectRefused(t, "another workload's certificate", status, e, 403, enrollapi.ReasonUnauthenticated)
	status, e, _ = renew(t, base, b, foreignCert(t, b))
	expectRefused(t, "a certificate from another CA", status, e, 401, enrollapi.ReasonUnauthenticated)
}

// foreignCert is a self-signed certificate with w's URI: right name, wrong issuer.
func foreignCert(t *testing.T, w *enrolled) *tls.Certificate {
	t.Helper()
	c := testpki.SelfSigned(t, testpki.URIs(w.cert.URIs...), testpki.ExtKeyUsage(x509.ExtKeyUsageClientAuth))
	cert := c.TLS()
	return &cert
}
