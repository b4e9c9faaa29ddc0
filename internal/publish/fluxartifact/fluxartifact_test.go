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

package fluxartifact_test

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish/fluxartifact"
)

var meta = fluxartifact.Meta{
	Source:   "https://github.com/credo-dev/credo",
	Revision: "v0.1.0@sha1:0123456789abcdef0123456789abcdef01234567",
	Created:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600)),
}

// tree writes files (slash paths) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		file := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil { //nolint:gosec // test data
			t.Fatal(err)
		}
	}
	return dir
}

var manifests = map[string]string{
	"default/kustomization.yaml": "resources:\n  - ../manager\n",
	"manager/kustomization.yaml": "resources:\n  - deployment.yaml\n",
	"manager/deployment.yaml":    "kind: Deployment\n",
}

func TestBuiltArtifactPullsWithFluxsClient(t *testing.T) {
	g := NewWithT(t)
	img, err := fluxartifact.Build(tree(t, manifests), meta)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := img.Manifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Config.MediaType).To(Equal(oci.CanonicalConfigMediaType))
	g.Expect(m.Layers).To(HaveLen(1))
	g.Expect(m.Layers[0].MediaType).To(Equal(oci.CanonicalContentMediaType))

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	url := strings.TrimPrefix(srv.URL, "http://") + "/manifests/credo:v0.1.0"
	ref, err := name.ParseReference(url)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remote.Write(ref, img, remote.WithContext(t.Context()))).To(Succeed())

	out := t.TempDir()
	pulled, err := oci.NewClient(nil).Pull(t.Context(), url, out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pulled.Source).To(Equal(meta.Source))
	g.Expect(pulled.Revision).To(Equal(meta.Revision))
	g.Expect(pulled.Created).To(Equal("2026-01-02T02:04:05Z"), "created is the UTC time, RFC 3339")
	digest, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pulled.Digest).To(HaveSuffix("@" + digest.String()))
	for p, data := range manifests {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(got)).To(Equal(data), p)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	g := NewWithT(t)
	digest := func(dir string, meta fluxartifact.Meta) v1.Hash {
		img, err := fluxartifact.Build(dir, meta)
		g.Expect(err).NotTo(HaveOccurred())
		d, err := img.Digest()
		g.Expect(err).NotTo(HaveOccurred())
		return d
	}
	first := digest(tree(t, manifests), meta)
	again := tree(t, manifests)
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for p := range manifests {
		g.Expect(os.Chtimes(filepath.Join(again, filepath.FromSlash(p)), old, old)).To(Succeed())
	}
	g.Expect(digest(again, meta)).To(Equal(first), "the same tree, written again at another time, gives the same digest")

	changed := map[string]string{}
	for p, data := range manifests {
		changed[p] = data
	}
	changed["manager/deployment.yaml"] = "kind: Deployment\nmetadata: {}\n"
	g.Expect(digest(tree(t, changed), meta)).NotTo(Equal(first))
	later := meta
	later.Created = meta.Created.Add(time.Second)
	g.Expect(digest(tree(t, manifests), later)).NotTo(Equal(first))
}
