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
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// The identity form is two flags of the enrollment-controller, the default
// form unless given; a form that cannot be written is refused, saying why.
func TestTheIdentityFormIsValidatedAsFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want enrollapi.IdentityForm
		err  string
	}{
		"no flag is the default form": {want: enrollapi.DefaultIdentityForm()},
		"spiffe with a trust domain": {args: []string{"--identity-scheme=spiffe", "--trust-domain=prod.example"},
			want: enrollapi.IdentityForm{Scheme: enrollapi.SchemeSPIFFE, TrustDomain: "prod.example"}},
		"credo with a trust domain": {args: []string{"--trust-domain=prod.example"},
			want: enrollapi.IdentityForm{Scheme: enrollapi.SchemeCredo, TrustDomain: "prod.example"}},
		"spiffe without a trust domain": {args: []string{"--identity-scheme=spiffe"}, err: "needs a trust domain"},
		"a trust domain outside the SPIFFE grammar": {args: []string{"--identity-scheme=spiffe", "--trust-domain=Prod.Example"},
			err: "only lower-case letters, digits"},
		"an unknown scheme": {args: []string{"--identity-scheme=https", "--trust-domain=prod.example"}, err: "unknown identity scheme"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := enrollment.NewOptions()
			fs := pflag.NewFlagSet("enrollment-controller", pflag.ContinueOnError)
			o.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.err == "" {
				if err != nil || o.Identity != tc.want {
					t.Fatalf("got %+v, %v; want %+v", o.Identity, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--"+enrollment.FlagIdentityScheme) {
				t.Fatalf("got %v, want an error naming --%s and saying %q", err, enrollment.FlagIdentityScheme, tc.err)
			}
			// The server is never built on it either.
			if _, err := enrollment.New(cluster, testCA, nil, o); err == nil {
				t.Fatal("enrollment.New accepted the form")
			}
		})
	}
}
