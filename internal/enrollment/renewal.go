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
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// handleRenewal renews a workload authenticated by its current certificate,
// expired or not, within the policy's grace. A denied workload, or one
// whose copies must all enroll again, renews nothing. An older certificate
// of the workload is either a retry of the renewal that replaced it (the
// same request, within the retry window), answered with the certificate
// already issued, or, while it is still valid, a duplicate identity. After
// the install's identity form changed, the current certificate's request
// for the URI in the former form is answered IdentityChanged, naming the
// URI now: the agent asks again for it.
func (s *Server) handleRenewal(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("uuid")
	var req enrollapi.RenewalRequest
	if e := decode(r, &req); e != nil {
		s.fail(w, e)
		return
	}
	leaf, e := s.authenticate(r, id)
	if e != nil {
		s.fail(w, e)
		return
	}
	peer := peerOf(r, req.Host)
	renewable := s.renewable(leaf)
	// A refusal returned with the Workload was judged on the API server's
	// copy: the cache's may lag behind a deny or a renewal.
	wl, refusal := s.findWorkload(r.Context(), id, renewable)
	if wl == nil {
		s.fail(w, refusal)
		return
	}
	if refusal != nil && refusal.reason == enrollapi.ReasonDenied {
		s.refuseWith(w, wl, enrollv1.RenewalDeniedReason, refusal)
		return
	}
	if refusal != nil && refusal.reason != enrollapi.ReasonNotCurrent {
		s.refuseRenewal(w, wl, refusal)
		return
	}
	policy, e := s.usablePolicy(r.Context(), wl.Namespace, wl.Spec.Policy)
	if e != nil {
		s.refuseRenewal(w, wl, e)
		return
	}
	csr, err := s.checkRenewalCSR([]byte(req.CSR), id, refusal == nil)
	var changed *OtherFormError
	if err != nil && !errors.As(err, &changed) {
		s.refuseRenewal(w, wl, &apiError{status: http.StatusBadRequest, reason: enrollapi.ReasonCSRInvalid, msg: err.Error()})
		return
	}
	if refusal != nil {
		s.olderCertificate(w, r, wl, policy, leaf, csr, peer, refusal)
		return
	}
	if s.now().After(policy.RenewalDeadline(leaf.NotAfter)) {
		s.refuseRenewal(w, wl, &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonRenewalGraceOver,
			msg: fmt.Sprintf("the certificate expired at %s, more than the renewal grace (%s) ago; enroll again with a join token",
				leaf.NotAfter.UTC().Format("2006-01-02T15:04:05Z"), policy.GetRenewalGrace())})
		return
	}
	if changed != nil {
		// The cache may not show yet a renewal served a moment ago, whose
		// lost answer this request retries in the former form: only the
		// API server's copy says the certificate is still current.
		fresh, e := s.getWorkload(r.Context(), wl.Namespace, wl.Name)
		if e != nil {
			s.fail(w, e)
			return
		}
		if refusal := renewable(fresh); refusal != nil {
			if refusal.reason != enrollapi.ReasonNotCurrent {
				s.refuseRenewal(w, fresh, refusal)
				return
			}
			older, err := s.checkRenewalCSR([]byte(req.CSR), id, false)
			if err != nil {
				s.refuseRenewal(w, fresh, &apiError{status: http.StatusBadRequest, reason: enrollapi.ReasonCSRInvalid, msg: err.Error()})
				return
			}
			s.olderCertificate(w, r, fresh, policy, leaf, older, peer, refusal)
			return
		}
		// Not a warning: every workload is answered so once after the
		// platform changed the form, and asks again at once.
		s.fail(w, &apiError{status: http.StatusConflict, reason: enrollapi.ReasonIdentityChanged, uri: changed.Want.String(),
			msg: fmt.Sprintf("the install's identity form changed: workload %s is %s now; send the renewal again, with the same certificate, and a certificate request for that URI",
				id, changed.Want)})
		return
	}
	resp, e := s.issue(r.Context(), wl, policy, csr, peer, renewable)
	switch {
	case e != nil && e.reason == enrollapi.ReasonNotCurrent && wl.Status.Serial != serialHex(leaf):
		// The cache named leaf current; the API server names another.
		s.olderCertificate(w, r, wl, policy, leaf, csr, peer, e)
		return
	case e != nil && e.reason == enrollapi.ReasonDenied:
		s.refuseWith(w, wl, enrollv1.RenewalDeniedReason, e)
		return
	case e != nil:
		s.fail(w, e)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// checkRenewalCSR checks a renewal's certificate request against the
// workload's URI in the install's form. When the form changed since the
// request's certificate was issued, the request names the URI in the former
// form: with the current certificate that is an *OtherFormError (the agent
// asks again for the new URI); with an older one (current false) the
// request is checked against the URI it names, so that the retry of a
// renewal served before the change is still told apart from a duplicate.
func (s *Server) checkRenewalCSR(csrPEM []byte, id string, current bool) (*x509.CertificateRequest, error) {
	csr, err := CheckCSR(csrPEM, s.Form.URI(id))
	var changed *OtherFormError
	if !current && errors.As(err, &changed) {
		return CheckCSR(csrPEM, changed.Got)
	}
	return csr, err
}

// renewable refuses a renewal with leaf of a Workload that is denied, whose
// copies must all enroll again, or whose current certificate is not leaf.
func (s *Server) renewable(leaf *x509.Certificate) workloadCheck {
	return func(wl *enrollv1.Workload) *apiError {
		if d := wl.Spec.Denied; d != nil {
			// Who denied it is in the Workload, not in the answer: the
			// caller may be the thief the deny is for.
			return &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonDenied,
				msg: fmt.Sprintf("workload %s is denied: %s; it renews nothing until the denial is lifted", wl.Name, d.Reason)}
		}
		if wl.ForcedToReenroll() {
			return &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonDuplicateIdentity,
				msg: fmt.Sprintf("workload %s was found running twice (a cloned host); no copy renews any more: enroll again with a join token", wl.Name)}
		}
		if wl.Status.Serial == "" || wl.Status.Serial != serialHex(leaf) {
			return &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonNotCurrent,
				msg: fmt.Sprintf("certificate %s is not the current certificate of workload %s; only the latest certificate renews", serialHex(leaf), wl.Name)}
		}
		return nil
	}
}

// olderCertificate answers a renewal presenting a certificate of wl (read
// from the API server) other than its current one: a retry of the request
// the current certificate was issued for gets it again; any other request
// made with a certificate still valid is a duplicate identity; an expired
// one is refused as not current.
func (s *Server) olderCertificate(w http.ResponseWriter, r *http.Request, wl *enrollv1.Workload, policy *enrollv1.EnrollmentPolicy,
	leaf *x509.Certificate, csr *x509.CertificateRequest, peer enrollv1.WorkloadPeer, notCurrent *apiError) {
	if digest := requestDigest(csr); serialHex(leaf) == wl.Status.PreviousSerial && digest == wl.Status.RequestSHA256 {
		// The request the current certificate was issued for: its sender
		// holds the agent's own record of it, so it is never a duplicate.
		// Within the window it gets the certificate again; after it, it
		// enrolls again.
		if s.isRetry(wl, digest) {
			s.answerAgain(w, r, wl, policy)
			return
		}
		notCurrent.msg += fmt.Sprintf("; a renewal retried more than %s after it was served is not answered again", s.RetryWindow)
		s.refuseRenewal(w, wl, notCurrent)
		return
	}
	if !s.now().Before(leaf.NotAfter) {
		s.refuseRenewal(w, wl, notCurrent)
		return
	}
	peer.Serial = serialHex(leaf)
	s.fail(w, s.recordDuplicate(r.Context(), wl, policy, peer))
}

// isRetry reports whether csr is, byte for byte, the request wl's current
// certificate was issued for, within the retry window. An agent retrying a
// renewal whose answer was lost sends the same request again; a copy of the
// agent on a cloned host makes its own (a signature of its own, a key of
// its own), so it is never taken for a retry.
func (s *Server) isRetry(wl *enrollv1.Workload, digest string) bool {
	st := wl.Status
	if s.RetryWindow <= 0 || st.RequestSHA256 == "" || st.Certificate == "" || st.IssuedTo == nil || st.IssuedTo.At == nil {
		return false
	}
	return digest == st.RequestSHA256 && s.now().Sub(st.IssuedTo.At.Time) <= s.RetryWindow
}

// answerAgain answers with wl's current certificate, recorded in its status
// when it was issued, and records nothing: the registry already names it.
func (s *Server) answerAgain(w http.ResponseWriter, r *http.Request, wl *enrollv1.Workload, policy *enrollv1.EnrollmentPolicy) {
	bundle, err := s.CA.Bundle(r.Context())
	if err != nil {
		s.fail(w, unavailable("reading the trust bundle", err))
		return
	}
	leaf, chain := splitLeaf(wl.Status.Certificate)
	s.event(wl, corev1.EventTypeNormal, enrollv1.RenewalRetriedReason,
		"a renewal retried with the request certificate %s was issued for got it again; the first answer was lost", wl.Status.Serial)
	writeJSON(w, http.StatusOK, certificateResponse(wl, wl.Status.URI, leaf, chain, bundle, wl.Status.NotAfter, policy))
}

// certificateResponse is the answer carrying a workload's certificate, built
// alike whether it was issued now or is answered again: its URI, and the
// workload's established attributes as its Workload holds them (a relabel
// reaches the agent at its next renewal).
func certificateResponse(wl *enrollv1.Workload, uri, leaf, chain string, bundle []byte, notAfter *metav1.Time, policy *enrollv1.EnrollmentPolicy) *enrollapi.CertificateResponse {
	resp := &enrollapi.CertificateResponse{
		UUID: wl.Name, URI: uri, Certificate: leaf, Chain: chain, Bundle: string(bundle),
		RenewalGraceSeconds: int64(policy.GetRenewalGrace() / time.Second),
		Labels:              wl.Status.Labels, Hostname: wl.Status.Hostname,
	}
	if notAfter != nil {
		resp.NotAfter = notAfter.UTC().Format(time.RFC3339)
	}
	return resp
}

// splitLeaf splits PEM certificates into the first one and the rest.
func splitLeaf(certs string) (leaf, chain string) {
	blk, rest := pem.Decode([]byte(certs))
	if blk == nil {
		return certs, ""
	}
	return string(pem.EncodeToMemory(blk)), strings.TrimLeft(string(rest), "\r\n\t ")
}

// requestDigest is the hex SHA-256 of a certificate request's DER.
func requestDigest(csr *x509.CertificateRequest) string {
	sum := sha256.Sum256(csr.Raw)
	return hex.EncodeToString(sum[:])
}
