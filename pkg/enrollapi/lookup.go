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

package enrollapi

// The lookup: a relying service asks the registry who a peer is and what
// its labels are now. The certificate authenticates a workload; the
// registry, which holds its mutable attributes, says what it may do.
//
// POST PathLookup with LookupRequest, authenticated one of two ways:
//   - over TLS with the relying service's own current workload certificate
//     as the client certificate (a credo workload outside the cluster), or
//   - with "Authorization: Bearer <token>", a Kubernetes token whose
//     audience is LookupAudience (a pod in the cluster).
//
// The caller must be allowed the verb "lookup" on the peer's Workload, in
// the peer's namespace (the ClusterRole credo-workload-lookup grants it). A
// workload caller is the user "credo:workload:<namespace>:<uuid>" with the
// groups "credo:workloads", "credo:workloads:<namespace>" and
// "credo:policy:<namespace>:<policy>". A peer the caller may not look up
// and one that does not exist get the same 403 ReasonLookupForbidden.

const (
	// PathLookup answers who a peer is and what its labels are now.
	PathLookup = "/v1/lookup"
	// LookupAudience is the audience a Kubernetes token presented to the
	// lookup must be issued for (kubectl create token --audience, or a
	// projected service account token).
	LookupAudience = "credo-enrollment"
	// VerbLookup is the RBAC verb a caller needs on the peer's Workload.
	VerbLookup = "lookup"
)

// LookupRequest names the peer: the URI SAN of a certificate it presented
// and, to learn whether that certificate is still the workload's, its
// serial number.
type LookupRequest struct {
	// URI is the peer certificate's one URI SAN.
	URI string `json:"uri"`
	// Serial is the peer certificate's serial number, lower-case hex
	// without leading zeros (fmt.Sprintf("%x", cert.SerialNumber)). Optional.
	Serial string `json:"serial,omitempty"`
}

// LookupResponse is what the registry holds of the peer now.
type LookupResponse struct {
	// UUID of the peer's workload.
	UUID string `json:"uuid"`
	// URI is the workload's URI in the install's identity form.
	URI string `json:"uri"`
	// Namespace and Policy the workload enrolled under.
	Namespace string `json:"namespace"`
	Policy    string `json:"policy"`
	// Hostname and Labels as the registry holds them now (the Workload's
	// established status.hostname and status.labels): they change without
	// re-enrollment. Empty when Denied.
	Hostname string            `json:"hostname,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	// AttributesGeneration counts the workload's established changes of
	// labels and hostname.
	AttributesGeneration int64 `json:"attributesGeneration,omitempty"`
	// Denied is true when the workload must not be trusted: an operator
	// denied it, or it was found running twice (a cloned host). A relying
	// service refuses it whatever it presents.
	Denied bool `json:"denied"`
	// Current is true when the request's Serial is the workload's current
	// certificate; Replaced, when it is the certificate that one replaced
	// (still valid until its notAfter: a connection made just before a
	// renewal). A certificate that is neither is not one the workload holds.
	Current  bool `json:"current"`
	Replaced bool `json:"replaced,omitempty"`
	// NotAfter of the workload's current certificate, RFC 3339.
	NotAfter string `json:"notAfter,omitempty"`
	// MaxAgeSeconds is how long the answer may be used: a change in the
	// registry (a relabel, a deny) reaches a caller that honours it within
	// this plus the server's watch lag.
	MaxAgeSeconds int64 `json:"maxAgeSeconds"`
}

// Reasons of refused lookups.
const (
	// ReasonLookupForbidden: the caller may not look up that peer, or
	// there is no such peer; one answer for both (403).
	ReasonLookupForbidden = "LookupForbidden"
	// ReasonLookupsLimited: the caller, or all callers together, asked for
	// more authorization reviews than the server makes (429 with
	// Retry-After); retry. Answers already decided are not limited.
	ReasonLookupsLimited = "LookupsLimited"
)
