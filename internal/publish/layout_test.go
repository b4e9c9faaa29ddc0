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

package publish

import (
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
)

// localRegistry is an in-memory registry on loopback; it returns its host.
func localRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// release is a small layout: an image index and an image, as a release
// names them under ghcr.io/credo-dev.
func release(g Gomega, prefix string) []entry {
	idx, err := random.Index(64, 1, 2)
	g.Expect(err).NotTo(HaveOccurred())
	img, err := random.Image(64, 1)
	g.Expect(err).NotTo(HaveOccurred())
	return []entry{
		{ref: prefix + "/credo:v0.1.0", index: idx},
		{ref: prefix + "/manifests/credo:v0.1.0", image: img},
	}
}

func TestPushSendsEveryEntryToItsReference(t *testing.T) {
	host := localRegistry(t)
	for _, tc := range []struct {
		name, prefix, from, to string
	}{
		{"under another registry prefix", DefaultRegistry, DefaultRegistry, host + "/mirror/credo-dev"},
		{"where the release names", host + "/credo-dev", DefaultRegistry, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			entries := release(g, tc.prefix)
			dir := filepath.Join(t.TempDir(), "oci")
			g.Expect(writeLayout(dir, entries)).To(Succeed())

			pushed, err := Push(t.Context(), dir, tc.from, tc.to)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pushed).To(HaveLen(len(entries)))
			for i, e := range entries {
				want, err := e.digest()
				g.Expect(err).NotTo(HaveOccurred())
				target := e.ref
				if tc.to != "" {
					target = tc.to + strings.TrimPrefix(e.ref, tc.from)
				}
				g.Expect(pushed[i]).To(Equal(Artifact{Ref: target, Digest: want}))
				g.Expect(digestAt(t, target)).To(Equal(want), target)
			}
		})
	}
}

func TestPushRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries func(g Gomega) []entry
		errMsg  string
	}{
		{"an entry outside the registry it moves from", func(g Gomega) []entry {
			return append(release(g, DefaultRegistry), entry{ref: "docker.io/someone/credo:v0.1.0", image: release(g, DefaultRegistry)[1].image})
		}, "docker.io/someone/credo:v0.1.0 is not under ghcr.io/credo-dev"},
		{"a prefix that is not a whole path segment", func(g Gomega) []entry {
			return append(release(g, DefaultRegistry), entry{ref: DefaultRegistry + "-fork/credo:v0.1.0", image: release(g, DefaultRegistry)[1].image})
		}, "ghcr.io/credo-dev-fork/credo:v0.1.0 is not under ghcr.io/credo-dev"},
		{"a reference no registry takes", func(g Gomega) []entry {
			return append(release(g, DefaultRegistry), entry{ref: DefaultRegistry + "/charts/credo:0.1.0+build", image: release(g, DefaultRegistry)[1].image})
		}, "/credo-dev/charts/credo:0.1.0+build"},
		{"an empty layout", func(Gomega) []entry { return nil }, "the layout holds nothing to push"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			to := localRegistry(t) + "/credo-dev"
			dir := filepath.Join(t.TempDir(), "oci")
			g.Expect(writeLayout(dir, tc.entries(g))).To(Succeed())
			_, err := Push(t.Context(), dir, DefaultRegistry, to)
			g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
			_, err = remote.Get(mustRef(g, to+"/credo:v0.1.0"), remote.WithContext(t.Context()))
			g.Expect(err).To(HaveOccurred(), "nothing is pushed when one entry cannot be")
		})
	}
}

func digestAt(t *testing.T, ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := remote.Get(r, remote.WithContext(t.Context()))
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}

func mustRef(g Gomega, ref string) name.Reference {
	r, err := name.ParseReference(ref)
	g.Expect(err).NotTo(HaveOccurred())
	return r
}
