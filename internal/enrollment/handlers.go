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
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// handleEnroll is step 1: check the token and the labels, register the
// workload, return its UUID.
func (s *Server) handleEnroll(w http.ResponseWriter, r *http.Request) {
	var req enrollapi.EnrollRequest
	jt, policy, ok := s.tokenRequest(w, r, &req, func() string { return req.Token })
	if !ok {
		return
	}
	if req.Hostname != "" {
		if errs := validation.IsDNS1123Subdomain(strings.ToLower(req.Hostname)); len(errs) > 0 {
			s.refuse(w, jt, badRequest("hostname is not a DNS name: %s", errs[0]))
			return
		}
	}
	if e := checkLabels(policy, req.Labels); e != nil {
		s.refuse(w, jt, e)
		return
	}
	// Counting and reserving a place under the token's lock: concurrent
	// requests of one token on this replica cannot both take the last one.
	id := uuid.NewString()
	unlock := s.pendingLocks.lock(jt.Namespace + "/" + jt.Name)
	e := s.checkPending(r.Context(), jt, id)
	unlock()
	if e != nil {
		s.refuse(w, jt, e)
		return
	}
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: jt.Namespace},
		Spec: enrollv1.WorkloadSpec{
			Policy: policy.Name, Token: jt.Name, Hostname: req.Hostname, Labels: req.Labels,
		},
	}
	if err := s.Client.Create(r.Context(), wl); err != nil {
		s.recent.forget(types.NamespacedName{Namespace: jt.Namespace, Name: jt.Name}, id)
		s.fail(w, unavailable("registering the workload", err))
		return
	}
	s.Log.V(1).Info("workload registered", "workload", id, "namespace", jt.Namespace, "token", jt.Name)
	writeJSON(w, http.StatusCreated, &enrollapi.EnrollResponse{
		UUID: id, Namespace: jt.Namespace, URI: s.Form.URI(id).String(),
	})
}

// handleCertificate is step 2: the token again and a CSR for the assigned
// identity; signs, records the serial and the token's use.
func (s *Server) handleCertificate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("uuid")
	var req enrollapi.CertificateRequest
	jt, policy, ok := s.tokenRequest(w, r, &req, func() string { return req.Token })
	if !ok {
		return
	}
	// The token names the namespace. Step 1 may have created the Workload
	// a moment ago: one the cache lacks, or holds refused, is read from the
	// API server.
	check := func(wl *enrollv1.Workload) *apiError {
		if wl.Spec.Token != jt.Name {
			return notRegisteredWith(id)
		}
		if wl.Spec.Denied != nil {
			return &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonDenied,
				msg: fmt.Sprintf("workload %s is denied: %s", id, wl.Spec.Denied.Reason)}
		}
		if wl.Status.Serial != "" {
			return &apiError{status: http.StatusConflict, reason: enrollapi.ReasonBadRequest,
				msg: fmt.Sprintf("workload %s already holds a certificate; it renews with it", id)}
		}
		return nil
	}
	peer := peerOf(r, req.Host)
	wl, e := s.cachedWorkload(r.Context(), jt.Namespace, id, check)
	if e != nil && e.status == http.StatusServiceUnavailable {
		s.fail(w, e)
		return
	}
	if e != nil && (e.status != http.StatusConflict || wl == nil) {
		if e.reason == enrollapi.ReasonWorkloadNotFound {
			e = notRegisteredWith(id)
		}
		s.refuse(w, jt, e)
		return
	}
	csr, err := CheckCSR([]byte(req.CSR), s.Form.URI(id))
	if err != nil {
		s.refuse(w, jt, &apiError{status: http.StatusBadRequest, reason: enrollapi.ReasonCSRInvalid, msg: err.Error()})
		return
	}
	if e != nil {
		s.enrolledAlready(w, r, jt, wl, policy, csr, e)
		return
	}
	resp, e := s.issue(r.Context(), wl, policy, csr, peer, check)
	if e != nil && e.status == http.StatusConflict && wl.Status.Serial != "" {
		// The cache held the registration; the API server, its certificate.
		s.enrolledAlready(w, r, jt, wl, policy, csr, e)
		return
	}
	if e != nil {
		s.fail(w, e)
		return
	}
	s.recordUse(jt, id)
	s.event(wl, corev1.EventTypeNormal, enrollv1.EnrolledEventReason,
		"enrolled with join token %s; certificate %s valid until %s", jt.Name, wl.Status.Serial, resp.NotAfter)
	writeJSON(w, http.StatusOK, resp)
}

// enrolledAlready answers step 2 for a workload that holds a certificate
// (read from the API server): the same request again is a retry whose
// answer was lost, and gets it; another is refused with e.
func (s *Server) enrolledAlready(w http.ResponseWriter, r *http.Request, jt *enrollv1.JoinToken, wl *enrollv1.Workload,
	policy *enrollv1.EnrollmentPolicy, csr *x509.CertificateRequest, e *apiError) {
	if wl.Status.PreviousSerial == "" && s.isRetry(wl, requestDigest(csr)) {
		s.answerAgain(w, r, wl, policy)
		return
	}
	s.refuse(w, jt, e)
}

// handleIdentity answers the install's identity form: how its workload
// URIs are written. No authentication: the form is in every certificate.
func (s *Server) handleIdentity(w http.ResponseWriter, _ *http.Request) {
	form := s.Form
	if form.Scheme == "" {
		form = enrollapi.DefaultIdentityForm()
	}
	writeJSON(w, http.StatusOK, &form)
}

func (s *Server) handleBundle(w http.ResponseWriter, r *http.Request) {
	bundle, err := s.CA.Bundle(r.Context())
	if err != nil {
		s.fail(w, unavailable("reading the trust bundle", err))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(bundle)
}

// checkToken rate-limits the caller's address and token id, then finds
// and checks the token and its policy. A failure costs the attempt's key
// one attempt and never changes the token.
// tokenRequest decodes the body of a request that carries a join token
// into req and checks the token (token reads it from req): steps 1 and 2
// open alike. On a refusal it answers, and returns false.
func (s *Server) tokenRequest(w http.ResponseWriter, r *http.Request, req any, token func() string) (*enrollv1.JoinToken, *enrollv1.EnrollmentPolicy, bool) {
	if e := decode(r, req); e != nil {
		s.fail(w, e)
		return nil, nil, false
	}
	jt, policy, e := s.checkToken(r, token())
	if e != nil {
		s.fail(w, e)
		return nil, nil, false
	}
	return jt, policy, true
}

func (s *Server) checkToken(r *http.Request, raw string) (*enrollv1.JoinToken, *enrollv1.EnrollmentPolicy, *apiError) {
	ctx := r.Context()
	addr := clientAddr(r)
	tok, parseErr := jointoken.Parse(raw)
	var cached []enrollv1.JoinToken
	if parseErr == nil {
		var e *apiError
		if cached, e = s.cachedTokens(ctx, tok.ID); e != nil {
			return nil, nil, e
		}
	}
	key := attemptKey(addr, "")
	if len(cached) > 0 {
		key = attemptKey(addr, tok.ID)
	}
	if !s.Limiter.Allowed(key) {
		s.refusals.Info(s.Log, "failed join token attempts rate limited", "address", addr, "knownToken", len(cached) > 0)
		return nil, nil, &apiError{status: http.StatusTooManyRequests, reason: enrollapi.ReasonRateLimited,
			msg: "too many failed join token attempts from this address with this token; wait and retry"}
	}
	if parseErr != nil {
		s.failed(key, addr, nil)
		return nil, nil, &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonTokenInvalid, msg: parseErr.Error()}
	}
	jt, e := s.findToken(ctx, tok, cached)
	if e != nil {
		if e.status != http.StatusServiceUnavailable {
			// Over the lookup budget nothing was judged: no failed attempt.
			if e.reason != enrollapi.ReasonTokenLookupsLimited {
				s.failed(key, addr, cached)
			}
			s.refusals.Info(s.Log, "enrollment refused", "reason", e.reason, "address", addr)
		}
		return nil, nil, e
	}
	policy, e := s.usableToken(ctx, jt)
	if e != nil {
		if e.status != http.StatusServiceUnavailable {
			s.failed(attemptKey(addr, jt.Name), addr, []enrollv1.JoinToken{*jt})
			s.refusalEvent(jt, enrollv1.EnrollmentRefusedReason, e)
		}
		return nil, nil, e
	}
	return jt, policy, nil
}

// authenticate checks the client certificate: it chains to the bundle (its
// validity period is judged by the caller, against the grace) and its only
// URI names the workload of the path, in the install's identity form or,
// for a certificate issued before the form changed, in another one (the
// caller still requires it to be the workload's current certificate, so an
// older form renews only within the lifetime and grace of a certificate
// issued before the change).
func (s *Server) authenticate(r *http.Request, id string) (*x509.Certificate, *apiError) {
	leaf, got, e := s.clientCertificate(r, false)
	if e != nil {
		return nil, e
	}
	if got != id {
		return nil, &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonUnauthenticated,
			msg: fmt.Sprintf("the client certificate is not workload %s's", id)}
	}
	return leaf, nil
}

// clientCertificate returns the request's client certificate and the UUID
// its only URI names (empty when it names none), once it chains to the
// bundle. With now, it must be valid now; otherwise only not before its
// validity (a renewal judges expiry against the grace).
func (s *Server) clientCertificate(r *http.Request, now bool) (*x509.Certificate, string, *apiError) {
	unauth := func(msg string) *apiError {
		return &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonUnauthenticated, msg: msg}
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, "", unauth("the request needs the workload's current certificate as the TLS client certificate")
	}
	leaf := r.TLS.PeerCertificates[0]
	bundle, err := s.CA.Bundle(r.Context())
	if err != nil {
		return nil, "", unavailable("reading the trust bundle", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		return nil, "", unavailable("reading the trust bundle", fmt.Errorf("no certificate in it"))
	}
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if s.now().Before(leaf.NotBefore) {
		return nil, "", unauth("the client certificate is not valid yet")
	}
	// Verified at an instant inside its own validity: expiry is judged
	// against the renewal grace afterwards.
	at := leaf.NotAfter.Add(-time.Second)
	if now {
		if !s.now().Before(leaf.NotAfter) {
			return nil, "", unauth("the client certificate expired; renew it")
		}
		at = s.now()
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, "", unauth("the client certificate was not issued by the enrollment CA")
	}
	if len(leaf.URIs) != 1 {
		return nil, "", unauth("the client certificate does not carry exactly one workload URI")
	}
	// A URI that names no workload is the empty UUID, which no caller
	// accepts.
	got, _ := s.workloadID(leaf.URIs[0])
	return leaf, got, nil
}

// workloadID is the UUID of a workload URI in the install's identity form
// or, for a certificate issued before the form changed, in another one.
func (s *Server) workloadID(u *url.URL) (string, error) {
	id, err := s.Form.Parse(u)
	if err != nil {
		_, id, err = enrollapi.FormOf(u)
	}
	return id, err
}

func notRegisteredWith(id string) *apiError {
	return &apiError{status: http.StatusNotFound, reason: enrollapi.ReasonWorkloadNotFound,
		msg: fmt.Sprintf("workload %s was not registered with this token; start the enrollment again", id)}
}

func serialHex(c *x509.Certificate) string { return fmt.Sprintf("%x", c.SerialNumber) }

// refuse answers a refused enrollment and records it on the token.
func (s *Server) refuse(w http.ResponseWriter, jt *enrollv1.JoinToken, e *apiError) {
	s.refusalEvent(jt, enrollv1.EnrollmentRefusedReason, e)
	s.fail(w, e)
}

// refuseRenewal answers a refused renewal and records it on the workload.
func (s *Server) refuseRenewal(w http.ResponseWriter, wl *enrollv1.Workload, e *apiError) {
	s.refuseWith(w, wl, enrollv1.RenewalRefusedReason, e)
}

// refuseWith answers a refused renewal and records it on the workload with
// the event reason given.
func (s *Server) refuseWith(w http.ResponseWriter, wl *enrollv1.Workload, reason string, e *apiError) {
	s.refusalEvent(wl, reason, e)
	s.fail(w, e)
}

func (s *Server) event(obj runtime.Object, eventType, reason, format string, args ...any) {
	if s.Recorder == nil {
		return
	}
	s.Recorder.AnnotatedEventf(obj, nil, eventMetadata(obj), eventType, reason, eventAction, format, args...)
}
