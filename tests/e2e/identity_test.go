//go:build e2e

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

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/tests/devenv"
)

// e2eTrustDomain is the trust domain the tests give the enrollment-controller.
const e2eTrustDomain = "credo-e2e.test"

// checkSVID asserts that c carries one SAN, the SPIFFE ID of workload id,
// and verifies as an X.509-SVID against the published anchor.
func checkSVID(t *testing.T, c *x509.Certificate, id string, anchor []*x509.Certificate) {
	t.Helper()
	want := "spiffe://" + e2eTrustDomain + "/workload/" + id
	if len(c.URIs) != 1 || c.URIs[0].String() != want || len(c.DNSNames)+len(c.IPAddresses)+len(c.EmailAddresses) != 0 {
		t.Fatalf("certificate SANs: URIs %v DNS %v IP %v; want only %s", c.URIs, c.DNSNames, c.IPAddresses, want)
	}
	bundle := x509bundle.FromX509Authorities(spiffeid.RequireTrustDomainFromString(e2eTrustDomain), anchor)
	sid, _, err := x509svid.Verify([]*x509.Certificate{c}, bundle)
	if err != nil {
		t.Fatalf("the certificate is not an X.509-SVID of %s: %v", e2eTrustDomain, err)
	}
	if sid.String() != want {
		t.Fatalf("SPIFFE ID %s, want %s", sid, want)
	}
}

// identityForm reads GET /v1/identity, unauthenticated, trusting the
// published anchor as agents do.
func identityForm(t *testing.T, e *devenv.Environment, anchor []*x509.Certificate) enrollapi.IdentityForm {
	t.Helper()
	roots := x509.NewCertPool()
	for _, c := range anchor {
		roots.AddCert(c)
	}
	c := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Get(e.EnrollmentURL + enrollapi.PathIdentity)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var form enrollapi.IdentityForm
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&form) != nil {
		t.Fatalf("GET %s: %d", enrollapi.PathIdentity, resp.StatusCode)
	}
	return form
}

func workloadURI(t *testing.T, ns, id string) string {
	t.Helper()
	var wl enrollv1.Workload
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &wl); err != nil {
		t.Fatalf("no Workload for %s: %v", id, err)
	}
	return wl.Status.URI
}

// An install configured with the SPIFFE form (two flags of the
// enrollment-controller) enrolls and renews a real agent, which is not
// configured for it, with X.509-SVIDs of its trust domain.
func TestSpiffeFormEnrollsRenews(t *testing.T) {
	e := needLocal(t)
	restartControllerWith(t, e, "enrollment-controller", "--identity-scheme=spiffe", "--trust-domain="+e2eTrustDomain)
	ns := enrollmentNamespace(t, "enroll-e2e-spiffe")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, anchor := anchorFile(t, 1)
	if form := identityForm(t, e, anchor); form.Scheme != enrollapi.SchemeSPIFFE || form.TrustDomain != e2eTrustDomain {
		t.Fatalf("GET %s answered %+v", enrollapi.PathIdentity, form)
	}

	a := newAgent(t, "agent-spiffe", token, caFile, "--label=role=web")
	a.start(t, e, true)
	first, _ := a.waitCert(t, nil, 30*time.Second)
	id := uuidOf(first)
	checkSVID(t, first, id, anchor)

	prev := first
	for i := range 2 {
		next, _ := a.waitCert(t, prev, ttl+5*time.Second)
		if uuidOf(next) != id {
			t.Fatalf("renewal %d changed the identity", i+1)
		}
		checkSVID(t, next, id, anchor)
		prev = next
	}
	if got := workloadURI(t, ns, id); got != first.URIs[0].String() {
		t.Fatalf("the Workload records the URI %q", got)
	}
}

// The platform changes an install's form: an agent enrolled in the former
// form renews into the new one without a token, keeping its identity.
func TestAnAgentRenewsIntoTheNewIdentityFormWithoutAToken(t *testing.T) {
	e := needLocal(t)
	ns := enrollmentNamespace(t, "enroll-e2e-form-change")
	newEnrollmentPolicy(t, ns, ttl, grace)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)
	a := newAgent(t, "agent-form-change", token, caFile)
	a.start(t, e, true)
	first, _ := a.waitCert(t, nil, 30*time.Second)
	id := uuidOf(first)
	if first.URIs[0].String() != "credo://workload/"+id {
		t.Fatalf("enrolled as %s, want the default form", first.URIs[0])
	}

	restartControllerWith(t, e, "enrollment-controller", "--identity-scheme=spiffe", "--trust-domain="+e2eTrustDomain)
	_, anchor := anchorFile(t, 1)
	next, _ := a.waitCertWhere(t, ttl+grace, func(c *x509.Certificate) bool {
		return len(c.URIs) == 1 && c.URIs[0].Scheme == enrollapi.SchemeSPIFFE
	}, ": no certificate in the SPIFFE form")
	if uuidOf(next) != id {
		t.Fatalf("the change of form changed the identity: %s, was %s", next.URIs[0], first.URIs[0])
	}
	checkSVID(t, next, id, anchor)
	if got := workloadURI(t, ns, id); got != next.URIs[0].String() {
		t.Fatalf("the Workload records the URI %q", got)
	}
}
