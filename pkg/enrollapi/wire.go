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

// Package enrollapi is the wire contract between the enrollment server and
// agents: paths, JSON bodies, error reasons and the workload identity URI.
// It has no dependencies beyond the standard library so that any Go program
// can speak it.
//
// Enrollment takes two calls so that the certificate request can name the
// identity the control plane assigned (an external issuer signs what the CSR
// asks for, nothing else):
//
//  1. POST PathWorkloads with EnrollRequest (the join token, hostname and
//     labels): the token and labels are checked, a Workload is registered
//     and its UUID and URI returned in EnrollResponse. No certificate yet.
//  2. POST PathCertificate(uuid) with CertificateRequest (the same token and a
//     CSR whose only SAN is EnrollResponse.URI): the certificate is signed and
//     returned in CertificateResponse; the token's use is recorded.
//
// Renewal is POST PathRenewal(uuid) with RenewalRequest over a TLS
// connection authenticated by the workload's current certificate.
// GET PathBundle returns the trust bundle and GET PathIdentity the
// install's IdentityForm (no authentication for either). POST PathLookup
// answers relying services who a peer is and what its labels are now
// (lookup.go).
//
// The URI is written in the install's IdentityForm, configured once on the
// enrollment-controller: credo://workload/<uuid> by default, or with a
// trust domain, credo://<trust domain>/workload/<uuid> or the SPIFFE ID
// spiffe://<trust domain>/workload/<uuid>. Agents are not configured with
// it: they ask for the URI the server names (EnrollResponse.URI, and after
// a change of form, Error.URI of a ReasonIdentityChanged refusal) and check
// only that it ends in their UUID (WorkloadIDOf).
package enrollapi

import (
	"net/url"
	"strings"
	"time"
)

const (
	// PathWorkloads registers a workload (step 1 of enrollment).
	PathWorkloads = "/v1/workloads"
	// PathBundle serves the trust bundle, PEM, content type application/x-pem-file.
	PathBundle = "/v1/bundle"

	// URIScheme and URIHost form the URI SAN of the default IdentityForm:
	// credo://workload/<uuid>.
	URIScheme = SchemeCredo
	URIHost   = "workload"

	// TokenSeparator separates a join token's id from its secret part.
	TokenSeparator = "."
)

// PathCertificate is where a registered workload gets its first certificate (step 2).
func PathCertificate(uuid string) string { return PathWorkloads + "/" + uuid + "/certificate" }

// PathRenewal is where a workload renews with its current certificate.
func PathRenewal(uuid string) string { return PathWorkloads + "/" + uuid + "/renewal" }

// WorkloadURI returns credo://workload/<uuid>, the URI of the default
// IdentityForm. A server writes its own form's, IdentityForm.URI.
func WorkloadURI(uuid string) *url.URL { return DefaultIdentityForm().URI(uuid) }

// ValidWorkloadID reports whether id can name a workload: the characters of
// a UUID, at most 64 of them. The server assigns UUIDs; the agent refuses
// any other identity, and no other one parses from a workload URI.
func ValidWorkloadID(id string) bool {
	return id != "" && len(id) <= 64 && strings.Trim(id, "0123456789abcdefABCDEF-") == ""
}

// ParseWorkloadURI returns the UUID of a credo://workload/<uuid> URI, the
// default IdentityForm, or an error.
func ParseWorkloadURI(u *url.URL) (string, error) { return DefaultIdentityForm().Parse(u) }

// EnrollRequest is step 1: who the workload says it is, and the token that allows it.
type EnrollRequest struct {
	// Token is the join token, "<id>.<secret>".
	Token string `json:"token"`
	// Hostname of the host the agent runs on; recorded in the Workload.
	Hostname string `json:"hostname"`
	// Labels the workload asks for; each must be allowed by the token's policy.
	Labels map[string]string `json:"labels,omitempty"`
}

// EnrollResponse is the answer to step 1.
type EnrollResponse struct {
	// UUID is the identity the control plane assigned.
	UUID string `json:"uuid"`
	// Namespace of the Workload and its policy.
	Namespace string `json:"namespace"`
	// URI is the only SAN the certificate request must carry, in the
	// install's IdentityForm.
	URI string `json:"uri"`
}

// CertificateRequest is step 2: the CSR for the assigned identity.
type CertificateRequest struct {
	// Token is the same join token as in step 1.
	Token string `json:"token"`
	// CSR is a PEM "CERTIFICATE REQUEST" whose only SAN is EnrollResponse.URI.
	CSR string `json:"csr"`
	// Host is what the agent says of its host, recorded beside the
	// certificate. Optional.
	Host *Host `json:"host,omitempty"`
}

// RenewalRequest renews over a connection authenticated by the current certificate.
type RenewalRequest struct {
	// CSR is a PEM "CERTIFICATE REQUEST" whose only SAN is the workload URI,
	// the one of the current certificate, or the one a ReasonIdentityChanged
	// refusal names. The agent may reuse its key or send a new one. A renewal whose answer
	// was lost is retried with the same CSR, byte for byte: within the
	// server's retry window it gets the certificate already issued, while
	// any other request presenting the replaced certificate is a duplicate
	// identity.
	CSR string `json:"csr"`
	// Host is what the agent says of its host, recorded beside the
	// certificate and in a duplicate-identity record. Optional.
	Host *Host `json:"host,omitempty"`
}

// Host is what an agent says of the host it runs on. It authenticates
// nothing: it tells two copies of a cloned host apart in the record.
type Host struct {
	// Hostname of the host.
	Hostname string `json:"hostname,omitempty"`
	// BootID is the kernel's random id of the current boot
	// (/proc/sys/kernel/random/boot_id on Linux), at most MaxBootIDLength
	// characters: a longer one is not recorded.
	BootID string `json:"bootID,omitempty"`
}

// MaxBootIDLength is the longest Host.BootID recorded (Workload status
// bounds it): an agent leaves a longer one out.
const MaxBootIDLength = 64

// CertificateResponse carries a signed certificate.
type CertificateResponse struct {
	// UUID of the workload.
	UUID string `json:"uuid"`
	// URI is the certificate's one URI SAN, in the install's IdentityForm.
	URI string `json:"uri,omitempty"`
	// Certificate is the leaf, PEM.
	Certificate string `json:"certificate"`
	// Chain holds the intermediates between the leaf and a bundle root, PEM; may be empty.
	Chain string `json:"chain,omitempty"`
	// Bundle is the trust bundle: every CA a peer should trust now, PEM.
	Bundle string `json:"bundle"`
	// NotAfter of the certificate, RFC 3339.
	NotAfter string `json:"notAfter"`
	// RenewalGraceSeconds is how long after NotAfter a renewal is still accepted.
	RenewalGraceSeconds int64 `json:"renewalGraceSeconds"`
	// Labels are the workload's labels as the registry holds them now (its
	// Workload's status.labels): they change without re-enrollment, and
	// reach the agent with each certificate. The certificate carries none.
	Labels map[string]string `json:"labels,omitempty"`
	// Hostname is the workload's hostname as the registry holds it now.
	Hostname string `json:"hostname,omitempty"`
}

// Reasons carried by Error. Each is stable: agents and alerts key on them.
const (
	ReasonBadRequest         = "BadRequest"
	ReasonTokenInvalid       = "TokenInvalid" // unknown id or wrong secret: one answer for both
	ReasonTokenExpired       = "TokenExpired"
	ReasonTokenRevoked       = "TokenRevoked"
	ReasonPolicyRevoked      = "PolicyRevoked"
	ReasonLabelsNotAllowed   = "LabelsNotAllowed"
	ReasonCSRInvalid         = "CSRInvalid"
	ReasonWorkloadNotFound   = "WorkloadNotFound"
	ReasonNotCurrent         = "CertificateNotCurrent" // renewal with an older certificate of the workload
	ReasonRenewalGraceOver   = "RenewalGraceExceeded"  // re-enrollment with a token is needed
	ReasonUnauthenticated    = "Unauthenticated"
	ReasonRateLimited        = "RateLimited"
	ReasonSigningUnavailable = "SigningUnavailable"
	ReasonSigningRefused     = "SigningRefused" // the external issuer denied or failed the request
	// ReasonPolicyExceedsLimits: the policy asks for a certificateTTL,
	// tokenLifetime or renewalGrace over the platform's maximum; nothing is
	// signed under it until an admin lowers it. Not a re-enrollment: the
	// same workload renews once the policy is fixed.
	ReasonPolicyExceedsLimits = "PolicyExceedsLimits"
	// ReasonTooManyPending: the token has as many registered workloads
	// waiting for their certificate as the platform allows (answered 429
	// with Retry-After); retry once some complete or expire.
	ReasonTooManyPending = "TooManyPendingWorkloads"
	// ReasonDenied: the workload is denied (its Workload's spec.denied);
	// it renews nothing until an operator lifts the denial. The message
	// carries the denial's reason. Not a re-enrollment: the same workload
	// renews once the denial is lifted, within its grace.
	ReasonDenied = "WorkloadDenied"
	// ReasonDuplicateIdentity: another copy of the workload renewed with
	// its certificate (a cloned host); the workload renews no more and
	// every copy must enroll again with a join token.
	ReasonDuplicateIdentity = "DuplicateIdentity"
	// ReasonTokenLookupsLimited: the server has spent its budget of
	// lookups of join tokens it does not hold yet, across all clients
	// (answered 429 with Retry-After); retry. A token the server already
	// holds is never refused for it.
	ReasonTokenLookupsLimited = "TokenLookupsLimited"
	// ReasonIdentityChanged: the install's IdentityForm changed since the
	// current certificate was issued, and the renewal's request names the
	// URI in the former form (answered 409). Error.URI is the workload's
	// URI now: send the renewal again, presenting the same certificate,
	// with a request for that URI (the same key may be kept). Not a
	// re-enrollment.
	ReasonIdentityChanged = "IdentityChanged"
)

// Error is the JSON body of every non-2xx answer.
type Error struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// URI is set with ReasonIdentityChanged: the workload URI a renewal
	// request must name now.
	URI string `json:"uri,omitempty"`
}

func (e *Error) Error() string { return e.Reason + ": " + e.Message }

// NeedsReenrollment reports whether the agent must enroll again with a new token.
func (e *Error) NeedsReenrollment() bool {
	switch e.Reason {
	case ReasonWorkloadNotFound, ReasonNotCurrent, ReasonRenewalGraceOver, ReasonPolicyRevoked, ReasonDuplicateIdentity,
		// A renewal whose certificate does not authenticate (not issued by
		// a CA in the bundle any more, or not this workload's): only a new
		// enrollment gives the agent a certificate that does.
		ReasonUnauthenticated:
		return true
	}
	return false
}

// IsDenied reports whether the workload is denied: it must stop until an
// operator lifts the denial, and needs no new token.
func (e *Error) IsDenied() bool { return e.Reason == ReasonDenied }

// RenewalStart is the start of a certificate's renewal window, the last
// third of its lifetime: notBefore plus ⌈lifetime×2/3⌉. The server records
// it as a Workload's renewAfter and the agent renews no earlier.
func RenewalStart(notBefore, notAfter time.Time) time.Time {
	lifetime := notAfter.Sub(notBefore)
	if lifetime <= 0 {
		return notBefore
	}
	return notBefore.Add((2*lifetime + 2) / 3) // smallest d with 3d >= 2L
}
