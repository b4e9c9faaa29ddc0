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

package enrollment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/lookupauthz"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// Bounds of the lookup answers' lifetime (--lookup-max-age).
const (
	DefaultLookupMaxAge = 30 * time.Second
	MaxLookupMaxAge     = 5 * time.Minute
	FlagLookupMaxAge    = "lookup-max-age"
)

// maxSerialHex bounds a serial in a lookup: RFC 5280 serials are at most
// 20 octets.
const maxSerialHex = 40

// handleLookup answers a relying service who a peer is and what its labels
// are now (seed 001: "Cert = authentication; registry = authorization").
// The caller authenticates with its own current workload certificate or a
// Kubernetes token, and must be allowed the verb lookup on the peer's
// Workload. The answer is the registry's established state, from the
// cache, with how long it may be used.
func (s *Server) handleLookup(w http.ResponseWriter, r *http.Request) {
	var req enrollapi.LookupRequest
	if e := decode(r, &req); e != nil {
		s.fail(w, e)
		return
	}
	if s.Reviews == nil {
		s.fail(w, &apiError{status: http.StatusNotFound, reason: enrollapi.ReasonBadRequest, msg: "this enrollment server answers no lookups"})
		return
	}
	u, err := url.Parse(req.URI)
	if err != nil || req.URI == "" {
		s.fail(w, badRequest("uri is not a URI"))
		return
	}
	id, err := s.workloadID(u)
	if err != nil {
		s.fail(w, badRequest("uri is not a workload URI: %v", err))
		return
	}
	if len(req.Serial) > maxSerialHex || strings.Trim(req.Serial, "0123456789abcdef") != "" {
		s.fail(w, badRequest("serial must be the certificate's serial number in lower-case hex, at most %d digits", maxSerialHex))
		return
	}
	sub, e := s.lookupCaller(r)
	if e != nil {
		s.fail(w, e)
		return
	}
	wl, e := s.lookedUp(r.Context(), sub, id)
	if e != nil {
		s.fail(w, e)
		return
	}
	metrics.Looked(wl.Namespace)
	writeJSON(w, http.StatusOK, s.lookupAnswer(wl, req.Serial))
}

// lookupCaller authenticates the caller of a lookup: a Kubernetes token in
// the Authorization header, or else the client certificate, which must be
// a workload's current one, valid now, of a workload not denied.
func (s *Server) lookupCaller(r *http.Request) (lookupauthz.Subject, *apiError) {
	if h := r.Header.Get("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || token == "" {
			return lookupauthz.Subject{}, &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonUnauthenticated,
				msg: "the Authorization header must be \"Bearer <token>\""}
		}
		return s.tokenCaller(r, token)
	}
	leaf, id, e := s.clientCertificate(r, true)
	if e != nil {
		return lookupauthz.Subject{}, e
	}
	if id == "" {
		return lookupauthz.Subject{}, &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonUnauthenticated,
			msg: "the client certificate's URI names no workload"}
	}
	// The caller's own Workload says whether it may act at all: the
	// checks of a renewal, with no grace (the certificate is valid now).
	wl, e := s.findWorkload(r.Context(), id, s.renewable(leaf))
	if e != nil {
		if e.reason == enrollapi.ReasonNotCurrent {
			// A connection made before the caller renewed: a new one
			// presents the new certificate.
			e.status = http.StatusUnauthorized
			e.msg += "; connect again with the current certificate"
		}
		return lookupauthz.Subject{}, e
	}
	return lookupauthz.WorkloadSubject(wl), nil
}

// tokenCaller authenticates a Kubernetes token by a TokenReview. A token
// that does not authenticate costs its address a failed attempt, as a bad
// join token does.
func (s *Server) tokenCaller(r *http.Request, token string) (lookupauthz.Subject, *apiError) {
	addr := clientAddr(r)
	key := attemptKey(addr, "lookup")
	if !s.Limiter.Allowed(key) {
		return lookupauthz.Subject{}, &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonRateLimited, retryAfter: 30,
			msg: "too many tokens from this address did not authenticate; wait and retry"}
	}
	sub, ok, err := s.Reviews.Authenticate(r.Context(), token, addr)
	if err != nil {
		return lookupauthz.Subject{}, reviewFailed(err)
	}
	if !ok {
		s.Limiter.Failed(key)
		s.refusals.Info(s.Log, "lookup token refused", "address", addr)
		return lookupauthz.Subject{}, &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonUnauthenticated,
			msg: fmt.Sprintf("the token does not authenticate for the audience %s", enrollapi.LookupAudience)}
	}
	return sub, nil
}

// lookedUp returns the Workload id from the cache when sub may look it up.
// A workload the cache does not hold and one sub may not look up get the
// same answer, so that a caller learns nothing of what it may not see.
func (s *Server) lookedUp(ctx context.Context, sub lookupauthz.Subject, id string) (*enrollv1.Workload, *apiError) {
	forbidden := &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonLookupForbidden,
		msg: fmt.Sprintf("%s may not look up workload %s, or there is no such workload", sub.User, id)}
	var list enrollv1.WorkloadList
	if err := s.Reader.List(ctx, &list, client.MatchingFields{nameIndex: id}); err != nil {
		return nil, unavailable("reading workloads", err)
	}
	if len(list.Items) != 1 {
		return nil, forbidden
	}
	wl := &list.Items[0]
	allowed, err := s.Reviews.Allowed(ctx, sub, wl.Namespace, wl.Name)
	if err != nil {
		return nil, reviewFailed(err)
	}
	if !allowed {
		return nil, forbidden
	}
	return wl, nil
}

func reviewFailed(err error) *apiError {
	var limited *lookupauthz.Limited
	if errors.As(err, &limited) {
		return &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonLookupsLimited,
			retryAfter: limited.RetryAfter, msg: limited.Error()}
	}
	return unavailable("reviewing the lookup", err)
}

// lookupAnswer is what the registry holds of wl now. A denied workload, or
// one found running twice, is answered denied with no attributes.
func (s *Server) lookupAnswer(wl *enrollv1.Workload, serial string) *enrollapi.LookupResponse {
	st := wl.Status
	ans := &enrollapi.LookupResponse{
		UUID: wl.Name, URI: s.Form.URI(wl.Name).String(), Namespace: wl.Namespace, Policy: wl.Spec.Policy,
		AttributesGeneration: st.AttributesGeneration,
		Denied:               wl.Spec.Denied != nil || wl.ForcedToReenroll(),
		Current:              serial != "" && serial == st.Serial,
		Replaced:             serial != "" && serial == st.PreviousSerial,
		MaxAgeSeconds:        int64(s.LookupMaxAge / time.Second),
	}
	if st.NotAfter != nil {
		ans.NotAfter = st.NotAfter.UTC().Format(time.RFC3339)
	}
	if !ans.Denied {
		ans.Labels, ans.Hostname = st.Labels, st.Hostname
	}
	return ans
}
