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
	"net/url"
	"strings"
	"testing"
)

const testID = "0b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60"

func TestEachIdentityFormWritesAndParsesItsURI(t *testing.T) {
	for _, tc := range []struct {
		name string
		form IdentityForm
		want string
	}{
		{"the default form is credo://workload/<uuid>", DefaultIdentityForm(), "credo://workload/" + testID},
		{"the zero form is the default form", IdentityForm{}, "credo://workload/" + testID},
		{"credo with a trust domain", IdentityForm{Scheme: SchemeCredo, TrustDomain: "corp.example"}, "credo://corp.example/workload/" + testID},
		{"spiffe", IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: "prod.example_1-a"}, "spiffe://prod.example_1-a/workload/" + testID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.form.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := tc.form.URI(testID)
			if got.String() != tc.want {
				t.Fatalf("URI = %s, want %s", got, tc.want)
			}
			// What a certificate carries is parsed back from its text.
			parsed, err := url.Parse(got.String())
			if err != nil {
				t.Fatal(err)
			}
			if id, err := tc.form.Parse(parsed); err != nil || id != testID {
				t.Fatalf("Parse(%s) = %q, %v", parsed, id, err)
			}
			if f, id, err := FormOf(parsed); err != nil || id != testID || f.URI(testID).String() != tc.want {
				t.Fatalf("FormOf(%s) = %+v, %q, %v", parsed, f, id, err)
			}
			if id, err := WorkloadIDOf(parsed); err != nil || id != testID {
				t.Fatalf("WorkloadIDOf(%s) = %q, %v", parsed, id, err)
			}
		})
	}
}

func TestAFormParsesNoOtherFormsURI(t *testing.T) {
	spiffe := IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: "prod.example"}
	forms := []IdentityForm{
		DefaultIdentityForm(),
		{Scheme: SchemeCredo, TrustDomain: "prod.example"},
		spiffe,
		{Scheme: SchemeSPIFFE, TrustDomain: "other.example"},
	}
	for i, f := range forms {
		for j, other := range forms {
			if i == j {
				continue
			}
			if id, err := f.Parse(other.URI(testID)); err == nil {
				t.Errorf("%s parsed %s as workload %q", f, other.URI(testID), id)
			}
		}
	}
	for _, bad := range []string{
		"spiffe://prod.example/workload/someone-else",
		"spiffe://prod.example/workload/" + testID + "/x",
		"spiffe://prod.example/" + testID,
		"spiffe://prod.example:443/workload/" + testID,
		"spiffe://user@prod.example/workload/" + testID,
		"spiffe://prod.example/workload/" + testID + "?q=1",
		"spiffe://prod.example/workload/" + testID + "#f",
		"spiffe://prod.example/workload/" + testID + "/",
		"spiffe://prod.example/workload/%30b6f5c1e-2a8d-4f7e-9c3b-5d1a7e2f4c60",
		"spiffe://PROD.example/workload/" + testID,
	} {
		u, err := url.Parse(bad)
		if err != nil {
			continue
		}
		if id, err := spiffe.Parse(u); err == nil {
			t.Errorf("%s parsed %s as workload %q", spiffe, bad, id)
		} else if !strings.Contains(err.Error(), "spiffe://prod.example/workload/<uuid>") {
			t.Errorf("the error does not name the form expected: %v", err)
		}
	}
}

func TestValidateRefusesFormsThatCannotBeWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		form IdentityForm
		want string
	}{
		{"spiffe without a trust domain", IdentityForm{Scheme: SchemeSPIFFE}, "needs a trust domain"},
		{"an unknown scheme", IdentityForm{Scheme: "https", TrustDomain: "example.org"}, "unknown identity scheme"},
		{"upper-case letters", IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: "Example.org"}, "only lower-case letters"},
		{"a port", IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: "example.org:443"}, "only lower-case letters"},
		{"a path", IdentityForm{Scheme: SchemeCredo, TrustDomain: "example.org/x"}, "only lower-case letters"},
		{"too long", IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: strings.Repeat("a", MaxTrustDomainLength+1)}, "more than 255"},
		{"the default form's authority as a credo trust domain", IdentityForm{Scheme: SchemeCredo, TrustDomain: URIHost}, "default form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.form.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if err := (IdentityForm{Scheme: SchemeSPIFFE, TrustDomain: strings.Repeat("a", MaxTrustDomainLength)}).Validate(); err != nil {
		t.Fatalf("a trust domain of %d characters is refused: %v", MaxTrustDomainLength, err)
	}
}

func TestWorkloadIDOfTakesOnlyAUUIDAsLastSegment(t *testing.T) {
	for _, bad := range []string{
		"", "workload/" + testID, "urn:uuid:" + testID, "https://example.org/workload/someone-else",
		"https://example.org/workload/" + testID + "?x", "https://example.org/workload/" + testID + "/",
	} {
		u, err := url.Parse(bad)
		if err != nil {
			continue
		}
		if id, err := WorkloadIDOf(u); err == nil {
			t.Errorf("WorkloadIDOf(%q) = %q", bad, id)
		}
	}
	if _, err := WorkloadIDOf(nil); err == nil {
		t.Error("WorkloadIDOf(nil) returned no error")
	}
}
