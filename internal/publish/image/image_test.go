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

package image_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish/image"
)

const caBundle = "-----BEGIN CERTIFICATE-----\nnot parsed by the builder\n-----END CERTIFICATE-----\n"

// spec is a two-platform spec over fake binaries: each platform's files
// name their platform, so the two images differ.
func spec(t *testing.T) image.Spec {
	t.Helper()
	platforms := map[string]string{}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		dir := filepath.Join(t.TempDir(), strings.ReplaceAll(p, "/", "_"))
		if err := os.MkdirAll(filepath.Join(dir, "not-a-binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, bin := range []string{"trust-controller", "credo-agent"} {
			if err := os.WriteFile(filepath.Join(dir, bin), []byte(bin+" for "+p), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		platforms[p] = dir
	}
	return image.Spec{
		Annotations: map[string]string{
			"org.opencontainers.image.version":  "v0.1.0",
			"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
		},
		Created:        modTime,
		CACertificates: []byte(caBundle),
		Platforms:      platforms,
		Entrypoint:     "trust-controller",
	}
}

func TestBuildMakesOneImagePerPlatform(t *testing.T) {
	g := NewWithT(t)
	s := spec(t)
	built, err := image.Build(s)
	g.Expect(err).NotTo(HaveOccurred())

	index, err := built.Index.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(index.Annotations).To(Equal(s.Annotations))
	g.Expect(index.Manifests).To(HaveLen(2))
	for _, d := range index.Manifests {
		g.Expect(d.Platform).NotTo(BeNil())
		p := d.Platform.OS + "/" + d.Platform.Architecture
		g.Expect(s.Platforms).To(HaveKey(p))
		img := built.Images[p]
		g.Expect(img).NotTo(BeNil(), p)
		g.Expect(img.Digest()).To(Equal(d.Digest), "%s: the index names the image Images holds", p)
		g.Expect(d.Annotations).To(Equal(s.Annotations), p)

		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.OS + "/" + cfg.Architecture).To(Equal(p))
		g.Expect(cfg.Config.User).To(Equal("65532:65532"))
		g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/trust-controller"}))
		g.Expect(cfg.Created.Time.Equal(s.Created)).To(BeTrue(), "%s created %s", p, cfg.Created)
		g.Expect(cfg.Config.Labels).To(Equal(s.Annotations))
		manifest, err := img.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(manifest.Annotations).To(Equal(s.Annotations))

		files := filesystem(g, img)
		g.Expect(files).To(HaveKey("etc/passwd"))
		g.Expect(string(files["etc/passwd"].data)).To(ContainSubstring(":x:65532:65532:"))
		g.Expect(files).To(HaveKey(image.CACertificatesPath))
		g.Expect(image.CACertificatesPath).To(Equal("etc/ssl/certs/ca-certificates.crt"))
		g.Expect(string(files[image.CACertificatesPath].data)).To(Equal(caBundle))
		for _, bin := range []string{"trust-controller", "credo-agent"} {
			g.Expect(files).To(HaveKey(bin), "%s: the binaries are at the root", p)
			g.Expect(files[bin].mode).To(BeEquivalentTo(0o755), "%s: %s", p, bin)
			g.Expect(string(files[bin].data)).To(Equal(bin + " for " + p))
		}
		g.Expect(files).NotTo(HaveKey("not-a-binary/"), "only regular files are binaries")
	}
}

func TestBuildIsReproducible(t *testing.T) {
	g := NewWithT(t)
	s := spec(t)
	first, err := image.Build(s)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := first.Index.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	second, err := image.Build(s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.Index.Digest()).To(Equal(want))

	s.Created = s.Created.Add(time.Hour)
	later, err := image.Build(s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(later.Index.Digest()).NotTo(Equal(want))
}

func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(s *image.Spec)
		errMsg string
	}{
		{"a platform that is not os/arch", func(s *image.Spec) {
			s.Platforms["amd64"] = s.Platforms["linux/amd64"]
		}, `platform "amd64" is not os/arch`},
		{"a platform without binaries", func(s *image.Spec) {
			s.Platforms["linux/arm64"] = t.TempDir()
		}, "no binaries in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := spec(t)
			tc.mutate(&s)
			_, err := image.Build(s)
			g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
		})
	}
}

type file struct {
	mode int64
	data []byte
}

// filesystem is the image's flattened file system by path.
func filesystem(g Gomega, img v1.Image) map[string]file {
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]file{}
	for h, data := range tarEntries(g, rc) {
		if h.Typeflag == tar.TypeReg {
			out[h.Name] = file{mode: h.Mode, data: data}
		} else {
			out[h.Name] = file{mode: h.Mode}
		}
	}
	return out
}
