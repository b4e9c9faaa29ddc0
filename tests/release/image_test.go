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

package release

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/internal/publish/image"
	"github.com/credo-dev/credo/internal/publish/signing"
)

// The image index, read back from the registry: one image per platform of
// the release, each running as user 65532 with the commit and version in
// its labels, carrying Debian's CA certificates and exactly the binaries
// built for that platform (one per command of cmd/, each an ELF file of
// that architecture); those of this machine's platform answer --version
// from the extracted layer with the release's version and commit; each
// platform's SBOM is attached where cosign looks for it.
func TestTheImageIndexHoldsTheBuiltBinaries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	idx, err := remote.Index(ref(g, registryPrefix+"/credo:"+installTag), remote.WithContext(ctx))
	g.Expect(err).NotTo(HaveOccurred())
	digest, err := idx.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(digest).To(Equal(rel.Image.Digest))
	manifest, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())

	commands, err := os.ReadDir(repoPath("cmd"))
	g.Expect(err).NotTo(HaveOccurred())
	caBundle, err := os.ReadFile(publish.DefaultCACertificates)
	g.Expect(err).NotTo(HaveOccurred())

	var platforms []string
	for _, m := range manifest.Manifests {
		p := m.Platform.OS + "/" + m.Platform.Architecture
		platforms = append(platforms, p)
		t.Run(p, func(t *testing.T) {
			g := NewWithT(t)
			img, err := idx.Image(m.Digest)
			g.Expect(err).NotTo(HaveOccurred())
			cfg, err := img.ConfigFile()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Config.User).To(Equal(image.User))
			g.Expect(cfg.OS + "/" + cfg.Architecture).To(Equal(p))
			g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.revision", rel.Commit))
			g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", installTag))

			files := extract(g, img)
			g.Expect(files).To(HaveKeyWithValue("etc/passwd", ContainSubstring("nonroot:x:65532:65532:")))
			g.Expect(files).To(HaveKeyWithValue(image.CACertificatesPath, caBundle))
			built := filepath.Join(relOptions.Out, "bin", strings.ReplaceAll(p, "/", "_"))
			for _, c := range commands {
				data, ok := files[c.Name()]
				g.Expect(ok).To(BeTrue(), "the image has no /%s", c.Name())
				want, err := os.ReadFile(filepath.Join(built, c.Name()))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(bytes.Equal(data, want)).To(BeTrue(), "/%s is not the binary built for %s", c.Name(), p)
				g.Expect(elfMachine(g, data)).To(Equal(machineOf[m.Platform.Architecture]), c.Name())
			}
			if p == runtime.GOOS+"/"+runtime.GOARCH {
				dir := t.TempDir()
				for _, c := range commands {
					bin := filepath.Join(dir, c.Name())
					g.Expect(os.WriteFile(bin, files[c.Name()], 0o755)).To(Succeed()) //nolint:gosec // an executable
					out, err := exec.Command(bin, "--version").CombinedOutput()
					g.Expect(err).NotTo(HaveOccurred(), "%s --version: %s", c.Name(), out)
					g.Expect(string(out)).To(And(ContainSubstring(" "+installTag+" "), ContainSubstring(rel.Commit), ContainSubstring("go1.")))
				}
			}

			sbom, err := remote.Image(ref(g, registryPrefix+"/credo:"+signing.TagFor(m.Digest, "sbom")), remote.WithContext(ctx))
			g.Expect(err).NotTo(HaveOccurred(), "no SBOM attached to %s", p)
			layers, err := sbom.Layers()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(layers).To(HaveLen(1))
			mt, err := layers[0].MediaType()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mt).To(Equal(publish.SPDXMediaType))
			rc, err := layers[0].Uncompressed()
			g.Expect(err).NotTo(HaveOccurred())
			doc, err := io.ReadAll(rc)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(doc)).To(And(ContainSubstring(`"spdxVersion": "SPDX-2.3"`),
				ContainSubstring("pkg:golang/github.com/credo-dev/credo@"+installTag),
				ContainSubstring("pkg:golang/sigs.k8s.io/controller-runtime@")))
		})
	}
	g.Expect(platforms).To(ConsistOf(publish.DefaultPlatforms))
}

var machineOf = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// extract returns the regular files of img's filesystem by path.
func extract(g Gomega, img v1.Image) map[string][]byte {
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		g.Expect(err).NotTo(HaveOccurred())
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		g.Expect(err).NotTo(HaveOccurred())
		files[strings.TrimPrefix(path.Clean("/"+h.Name), "/")] = data
	}
}

func elfMachine(g Gomega, data []byte) elf.Machine {
	f, err := elf.NewFile(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	return f.Machine
}

// Built again from the same commit, into another directory, the release
// is the same, byte for byte: every digest, and the OCI layout's index
// (signatures and SBOMs included).
func TestTheReleaseIsReproducible(t *testing.T) {
	g := NewWithT(t)
	again := relOptions
	again.Out = filepath.Join(t.TempDir(), "again")
	second, err := publish.Release(context.Background(), again)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.Commit).To(Equal(rel.Commit))
	g.Expect(second.Image).To(Equal(rel.Image))
	g.Expect(second.Platforms).To(Equal(rel.Platforms))
	g.Expect(second.Manifests).To(Equal(rel.Manifests))
	g.Expect(second.Chart).To(Equal(rel.Chart))
	first, err := os.ReadFile(filepath.Join(rel.Layout, "index.json"))
	g.Expect(err).NotTo(HaveOccurred())
	other, err := os.ReadFile(filepath.Join(second.Layout, "index.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(other)).To(Equal(string(first)))
}
