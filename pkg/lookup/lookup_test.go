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

package lookup_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/pkg/lookup"
)

// registry answers every lookup with maxAge and counts them: the answers'
// contents are the enrollment server's (internal/enrollment tests them on
// the real control plane); here only the client's holding of them is.
func registry(t *testing.T, maxAge int64, token string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var asked atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(&enrollapi.Error{Reason: enrollapi.ReasonUnauthenticated, Message: "no"})
			return
		}
		var req enrollapi.LookupRequest
		if r.URL.Path != enrollapi.PathLookup || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(&enrollapi.LookupResponse{URI: req.URI, Current: req.Serial == "1", MaxAgeSeconds: maxAge,
			Labels: map[string]string{"role": "frontend"}})
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func roots(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

// Answers are held for their max age, by URI and serial, and no more than
// MaxEntries of them, the least recently used forgotten first.
func TestAnswersAreHeldForTheirMaxAgeWithinMaxEntries(t *testing.T) {
	srv, asked := registry(t, 30, "tok")
	now := time.Now()
	c, err := lookup.New(lookup.Options{Endpoint: srv.URL, Roots: roots(srv), MaxEntries: 2,
		Token: func() (string, error) { return "tok", nil }, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask := func(uri, serial string, wantAsked int64) *lookup.Peer {
		t.Helper()
		p, err := c.Lookup(ctx, uri, serial)
		if err != nil {
			t.Fatal(err)
		}
		if asked.Load() != wantAsked {
			t.Fatalf("lookup of %s %s: the registry was asked %d times, want %d", uri, serial, asked.Load(), wantAsked)
		}
		return p
	}
	if p := ask("credo://workload/a", "1", 1); !p.Current || p.Labels["role"] != "frontend" || !p.Expires.Equal(now.Add(30*time.Second)) {
		t.Fatalf("the answer: %+v", p)
	}
	ask("credo://workload/a", "1", 1)
	ask("credo://workload/a", "2", 2) // another certificate of the workload
	ask("credo://workload/b", "1", 3) // a third answer: a/1, least recently used, goes
	if c.Len() != 2 {
		t.Fatalf("%d answers held, want at most 2", c.Len())
	}
	ask("credo://workload/a", "2", 3)
	ask("credo://workload/a", "1", 4)
	now = now.Add(31 * time.Second)
	ask("credo://workload/a", "1", 5) // expired
}

// An answer whose max age is zero is not held; a refusal is an
// *enrollapi.Error with the server's reason.
func TestUnheldAnswersAndRefusals(t *testing.T) {
	srv, asked := registry(t, 0, "tok")
	c, err := lookup.New(lookup.Options{Endpoint: srv.URL, Roots: roots(srv), Token: func() (string, error) { return "tok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Lookup(context.Background(), "credo://workload/a", ""); err != nil {
			t.Fatal(err)
		}
	}
	if asked.Load() != 2 {
		t.Fatalf("an answer with no max age was held")
	}
	bad, _ := lookup.New(lookup.Options{Endpoint: srv.URL, Roots: roots(srv), Token: func() (string, error) { return "other", nil }})
	_, err = bad.Lookup(context.Background(), "credo://workload/a", "")
	var e *enrollapi.Error
	if !errors.As(err, &e) || e.Reason != enrollapi.ReasonUnauthenticated {
		t.Fatalf("a refusal: %v", err)
	}
}

// RequireLabel admits no request without a verified client certificate.
func TestRequireLabelNeedsAVerifiedCertificate(t *testing.T) {
	srv, asked := registry(t, 30, "tok")
	c, _ := lookup.New(lookup.Options{Endpoint: srv.URL, Roots: roots(srv), Token: func() (string, error) { return "tok", nil }})
	h := c.RequireLabel("role", "frontend")(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Fatal("admitted")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://a/", nil))
	if rec.Code != http.StatusUnauthorized || asked.Load() != 0 {
		t.Fatalf("a request with no client certificate: %d, registry asked %d times", rec.Code, asked.Load())
	}
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	pool := x509.NewCertPool()
	tok := func() (string, error) { return "", nil }
	for name, o := range map[string]lookup.Options{
		"http":            {Endpoint: "http://x", Roots: pool, Token: tok},
		"no roots":        {Endpoint: "https://x", Token: tok},
		"no credential":   {Endpoint: "https://x", Roots: pool},
		"two credentials": {Endpoint: "https://x", Roots: pool, Token: tok, ClientCertificate: func() (*tls.Certificate, error) { return nil, nil }},
	} {
		if _, err := lookup.New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
