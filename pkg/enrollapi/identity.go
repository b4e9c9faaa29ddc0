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

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Schemes of an IdentityForm.
const (
	// SchemeCredo is credo's own scheme, the default.
	SchemeCredo = "credo"
	// SchemeSPIFFE writes SPIFFE IDs: a certificate is an X.509-SVID of
	// the install's trust domain.
	SchemeSPIFFE = "spiffe"
)

const (
	// PathIdentity serves the install's IdentityForm as JSON (no
	// authentication): how its workload URIs are written.
	PathIdentity = "/v1/identity"

	// MaxTrustDomainLength is the longest trust domain, as SPIFFE bounds it.
	MaxTrustDomainLength = 255

	// workloadSegment precedes the UUID in a form with a trust domain.
	workloadSegment = "workload"
)

// IdentityForm is how an install writes the one URI SAN of its workload
// certificates. It is set once per install, on the enrollment-controller
// (never by a policy: namespace admins write policies, and could claim
// another tenant's or the platform's trust domain). The forms:
//
//	{credo, ""}                credo://workload/<uuid>      (the default)
//	{credo, "example.org"}     credo://example.org/workload/<uuid>
//	{spiffe, "example.org"}    spiffe://example.org/workload/<uuid>
//
// The zero value is the default form. It is also the JSON body of GET
// PathIdentity.
type IdentityForm struct {
	// Scheme is SchemeCredo or SchemeSPIFFE; empty means SchemeCredo.
	Scheme string `json:"scheme"`
	// TrustDomain is the URI's authority: lower-case letters, digits,
	// '.', '-' and '_', at most MaxTrustDomainLength characters. Required
	// for SchemeSPIFFE; optional for SchemeCredo.
	TrustDomain string `json:"trustDomain,omitempty"`
}

// DefaultIdentityForm is credo://workload/<uuid>.
func DefaultIdentityForm() IdentityForm { return IdentityForm{Scheme: SchemeCredo} }

func (f IdentityForm) scheme() string {
	if f.Scheme == "" {
		return SchemeCredo
	}
	return f.Scheme
}

// host and prefix are the URI's authority and the path before the UUID.
func (f IdentityForm) host() (host, prefix string) {
	if f.TrustDomain == "" {
		return URIHost, "/"
	}
	return f.TrustDomain, "/" + workloadSegment + "/"
}

// Validate refuses an unknown scheme, a SPIFFE form without a trust domain
// and a trust domain outside the SPIFFE grammar.
func (f IdentityForm) Validate() error {
	switch f.scheme() {
	case SchemeCredo:
		if f.TrustDomain == "" {
			return nil
		}
		if f.TrustDomain == URIHost {
			// credo://workload/workload/<uuid> would read as the default form.
			return fmt.Errorf("the credo identity scheme cannot take %q as its trust domain: it is the default form's authority", URIHost)
		}
	case SchemeSPIFFE:
		if f.TrustDomain == "" {
			return errors.New("the spiffe identity scheme needs a trust domain")
		}
	default:
		return fmt.Errorf("unknown identity scheme %q: want %s or %s", f.Scheme, SchemeCredo, SchemeSPIFFE)
	}
	return ValidateTrustDomain(f.TrustDomain)
}

// ValidateTrustDomain checks a trust domain against the SPIFFE grammar:
// one to MaxTrustDomainLength characters, each a lower-case letter, a
// digit, '.', '-' or '_'. The error quotes no more than the first
// character that is wrong.
func ValidateTrustDomain(td string) error {
	if td == "" {
		return errors.New("the trust domain is empty")
	}
	if len(td) > MaxTrustDomainLength {
		return fmt.Errorf("the trust domain is %d characters long, more than %d", len(td), MaxTrustDomainLength)
	}
	for i, c := range []byte(td) {
		if !trustDomainChar(c) {
			return fmt.Errorf("the trust domain has %q at position %d: only lower-case letters, digits, '.', '-' and '_' are allowed", c, i)
		}
	}
	return nil
}

func trustDomainChar(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'
}

// URI returns the workload URI of uuid in this form.
func (f IdentityForm) URI(uuid string) *url.URL {
	host, prefix := f.host()
	return &url.URL{Scheme: f.scheme(), Host: host, Path: prefix + uuid}
}

// String is the form's template, "<scheme>://<authority>/.../<uuid>".
func (f IdentityForm) String() string {
	host, prefix := f.host()
	return f.scheme() + "://" + host + prefix + "<uuid>"
}

// Parse returns the UUID a workload URI of this form names, or an error
// saying which form was expected. Nothing but the form is accepted: no
// port, user, query, fragment or escaped path.
func (f IdentityForm) Parse(u *url.URL) (string, error) {
	host, prefix := f.host()
	if u == nil || u.Scheme != f.scheme() || u.Host != host || !plain(u) || !strings.HasPrefix(u.Path, prefix) {
		return "", fmt.Errorf("not a workload URI of the form %s", f)
	}
	id := strings.TrimPrefix(u.Path, prefix)
	if !ValidWorkloadID(id) {
		return "", fmt.Errorf("not a workload URI of the form %s", f)
	}
	return id, nil
}

// plain reports whether u carries nothing but a scheme, a host and a path
// written as is.
func plain(u *url.URL) bool {
	return u.Opaque == "" && u.User == nil && u.RawPath == "" && u.RawQuery == "" && !u.ForceQuery &&
		u.Fragment == "" && u.RawFragment == ""
}

// FormOf returns the form of u and the UUID it names, for any form
// Validate accepts. A server judging a certificate of its own uses its
// form's Parse; FormOf tells what an older certificate of another form
// names.
func FormOf(u *url.URL) (IdentityForm, string, error) {
	if u == nil {
		return IdentityForm{}, "", errors.New("no workload URI")
	}
	f := IdentityForm{Scheme: u.Scheme}
	if u.Host != URIHost || u.Scheme != SchemeCredo {
		f.TrustDomain = u.Host
	}
	if err := f.Validate(); err != nil {
		return IdentityForm{}, "", fmt.Errorf("not a workload URI: %w", err)
	}
	id, err := f.Parse(u)
	if err != nil {
		return IdentityForm{}, "", err
	}
	return f, id, nil
}

// WorkloadIDOf returns the last path segment of a workload URI, whatever
// its form, when it can name a workload (ValidWorkloadID). Agents are not
// told the form beforehand: they take the URI the server names and check
// only that it ends in their UUID.
func WorkloadIDOf(u *url.URL) (string, error) {
	if u == nil || u.Scheme == "" || u.Host == "" || !plain(u) || !strings.HasPrefix(u.Path, "/") {
		return "", errors.New("not a workload URI: want <scheme>://<authority>/.../<uuid>")
	}
	id := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if !ValidWorkloadID(id) {
		return "", errors.New("not a workload URI: its last path segment is not a workload UUID")
	}
	return id, nil
}
