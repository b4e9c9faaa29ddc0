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

package credentials

import (
	"encoding/json"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
)

func TestPlaceValuesPutsTheAccountsFirstAndAloneAtTheirPaths(t *testing.T) {
	app := helmv2.ValuesReference{Kind: "Secret", Name: "ch.app.account", ValuesKey: "password", TargetPath: "users.app.password_sha256_hex"}
	root := helmv2.ValuesReference{Kind: "Secret", Name: "ch.root.account", ValuesKey: "password", TargetPath: "users.root.password_sha256_hex"}
	accounts := map[string]helmv2.ValuesReference{app.Name: app, root.Name: root}
	settings := helmv2.ValuesReference{Kind: "ConfigMap", Name: "settings", ValuesKey: "values.yaml"}
	atRoot := helmv2.ValuesReference{Kind: "ConfigMap", Name: "mine", ValuesKey: "hash", TargetPath: "users.root.password_sha256_hex"}
	aroundRoot := helmv2.ValuesReference{Kind: "ConfigMap", Name: "mine", ValuesKey: "user", TargetPath: "users.root"}
	insideRoot := helmv2.ValuesReference{Kind: "Secret", Name: "x", ValuesKey: "k", TargetPath: "users.root.password_sha256_hex.deeper"}
	elsewhere := helmv2.ValuesReference{Kind: "ConfigMap", Name: "mine", ValuesKey: "hash", TargetPath: "users.rooted.password_sha256_hex"}
	oldRoot := root
	oldRoot.TargetPath = "users.admin.password_sha256_hex"

	for _, tt := range []struct {
		name     string
		in, want []helmv2.ValuesReference
		good     bool
		shadowed bool
	}{
		{name: "an empty list gets the entry", in: nil, want: []helmv2.ValuesReference{root}},
		{name: "the entry goes before every other", in: []helmv2.ValuesReference{settings}, want: []helmv2.ValuesReference{root, settings}},
		{name: "an entry at its path first is dropped", in: []helmv2.ValuesReference{atRoot, root, settings}, want: []helmv2.ValuesReference{root, settings}, shadowed: true},
		{name: "an entry at its path after it is dropped", in: []helmv2.ValuesReference{root, atRoot}, want: []helmv2.ValuesReference{root}, shadowed: true},
		{name: "a path around it is dropped", in: []helmv2.ValuesReference{root, aroundRoot}, want: []helmv2.ValuesReference{root}, shadowed: true},
		{name: "a path inside it is dropped", in: []helmv2.ValuesReference{root, insideRoot}, want: []helmv2.ValuesReference{root}, shadowed: true},
		{name: "a path that only shares a prefix of a key stays", in: []helmv2.ValuesReference{root, elsewhere}, want: []helmv2.ValuesReference{root, elsewhere}, good: true},
		{name: "another account's entry keeps its place among the accounts'", in: []helmv2.ValuesReference{app, settings, root}, want: []helmv2.ValuesReference{app, root, settings}},
		{name: "accounts first in their order is good", in: []helmv2.ValuesReference{app, root, settings}, want: []helmv2.ValuesReference{app, root, settings}, good: true},
		{name: "the account's earlier targetPath is replaced", in: []helmv2.ValuesReference{oldRoot, settings}, want: []helmv2.ValuesReference{root, settings}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			hr := &helmv2.HelmRelease{Spec: helmv2.HelmReleaseSpec{ValuesFrom: tt.in}}
			p := placementOf(hr, root, accounts)
			g.Expect(p.good()).To(Equal(tt.good))
			g.Expect(p.shadowed()).To(Equal(tt.shadowed))
			out := placeValues(tt.in, root, accounts)
			g.Expect(out).To(Equal(tt.want))
			g.Expect(placeValues(out, root, accounts)).To(Equal(out), "placing twice changes nothing")
			g.Expect(placementOf(&helmv2.HelmRelease{Spec: helmv2.HelmReleaseSpec{ValuesFrom: out}}, root, accounts).good()).To(BeTrue())
		})
	}
}

func TestPathSegmentsFollowHelmsEscapes(t *testing.T) {
	g := NewWithT(t)
	g.Expect(pathSegments("users.app.password")).To(Equal([]string{"users", "app", "password"}))
	g.Expect(pathSegments(`users.app\.x.password`)).To(Equal([]string{"users", "app.x", "password"}))
	g.Expect(pathsOverlap("users.app", `users.app\.x.password`)).To(BeFalse())
	g.Expect(pathsOverlap("users.app", "users.app.password")).To(BeTrue())
}

func TestValueAtReadsWhatHelmRecorded(t *testing.T) {
	g := NewWithT(t)
	// A record's config as Helm writes it: JSON numbers print as Helm
	// prints them.
	config := json.RawMessage(`{"users":{"root":{"password_sha256_hex":"abc","n":12,"list":["x"]}},"other":[{},{}]}`)
	v, err := valueAt(config, "users.root.password_sha256_hex")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(Equal("abc"))
	v, err = valueAt(config, "users.root.n")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(Equal("12"))
	_, err = valueAt(config, "users.root")
	g.Expect(err).To(MatchError(errNoValueAtPath), "a map is no value")
	_, err = valueAt(config, "users.app.password_sha256_hex")
	g.Expect(err).To(MatchError(errNoValueAtPath))
	_, err = valueAt(config, "users.root.list")
	g.Expect(err).To(MatchError(errNoValueAtPath), "a list is no value")
	_, err = valueAt(config, "other.x")
	g.Expect(err).To(MatchError(errNoValueAtPath), "a list has no keys")
	_, err = valueAt(nil, "users.root.n")
	g.Expect(err).To(MatchError(errNoValueAtPath), "no values")
}
