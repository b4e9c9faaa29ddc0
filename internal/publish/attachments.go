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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/credo-dev/credo/internal/publish/chart"
	"github.com/credo-dev/credo/internal/publish/helmartifact"
	"github.com/credo-dev/credo/internal/publish/sbom"
	"github.com/credo-dev/credo/internal/publish/signing"
)

// SPDXMediaType is the media type cosign attaches an SPDX JSON SBOM with.
const SPDXMediaType types.MediaType = "text/spdx+json"

// sboms writes each platform's SBOM to sbom/ and attaches it to the
// platform's image as `cosign attach sbom` does (a sha256-<hex>.sbom tag).
func (b *builder) sboms(ctx context.Context) error {
	caVersion, distro := debianVersion(ctx, "ca-certificates"), distribution()
	for _, p := range b.o.Platforms {
		digest := b.r.Platforms[p]
		doc, err := sbom.Generate(sbom.Options{
			Name: b.o.imageRepo(), Version: b.o.Version,
			Namespace: b.o.Source + "/releases/" + b.o.Version + "/sbom/" + strings.ReplaceAll(p, "/", "-") + "/" + digest.Hex,
			Created:   b.r.Created, BinaryDir: b.binDir(p),
			Others: []sbom.Package{{Name: "ca-certificates", Version: caVersion,
				PURL: "pkg:deb/" + distro + "/ca-certificates@" + caVersion + "?arch=all"}},
		})
		if err != nil {
			return fmt.Errorf("SBOM of %s: %w", p, err)
		}
		file := filepath.Join(b.o.Out, "sbom", "credo-"+b.o.Version+"-"+strings.ReplaceAll(p, "/", "-")+".spdx.json")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, doc, 0o644); err != nil { //nolint:gosec // public
			return err
		}
		img, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON),
			mutate.Addendum{Layer: static.NewLayer(doc, SPDXMediaType)})
		if err != nil {
			return err
		}
		b.entries = append(b.entries, entry{ref: b.o.imageRepo() + ":" + signing.TagFor(digest, "sbom"), image: img})
	}
	return nil
}

// distribution is the package URL namespace of the machine's distribution,
// the ID of /etc/os-release (debian, ubuntu): the CA certificates are
// that distribution's package.
func distribution() string {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "debian"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if id, ok := strings.CutPrefix(line, "ID="); ok && strings.Trim(id, `"`) != "" {
			return strings.Trim(id, `"`)
		}
	}
	return "debian"
}

// debianVersion is the installed version of a Debian package, or
// NOASSERTION (SPDX's "not known") off Debian.
func debianVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		return "NOASSERTION"
	}
	return strings.TrimSpace(string(out))
}

// chart packages charts/credo at the release's version, its image pinned to
// the index's digest, and makes it an OCI artifact.
func (b *builder) chart(context.Context) error {
	chartVersion := strings.TrimPrefix(b.o.Version, "v")
	tgz, err := chart.Package(filepath.Join(b.o.Root, "charts", "credo"), chart.PackageOptions{
		Version: chartVersion, AppVersion: b.o.Version,
		ImageRepository: b.o.imageRepo(), ImageDigest: b.r.Image.Digest.String(),
		ModTime: b.r.Created,
	})
	if err != nil {
		return fmt.Errorf("packaging the chart: %w", err)
	}
	if err := os.WriteFile(filepath.Join(b.o.Out, "credo-"+chartVersion+".tgz"), tgz, 0o644); err != nil { //nolint:gosec // public
		return err
	}
	img, _, err := helmartifact.Build(tgz, b.r.Created)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	b.r.Chart = Artifact{Ref: b.o.chartRepo() + ":" + chartVersion, Digest: digest}
	b.entries = append(b.entries, entry{ref: b.r.Chart.Ref, image: img})
	b.signed = append(b.signed, Artifact{Ref: b.o.chartRepo(), Digest: digest})
	return nil
}

// files writes what is published beside the artifacts: the public key and
// the digests.
func (b *builder) files(context.Context) error {
	pub, err := b.o.Signer.PublicKeyPEM()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.o.Out, "cosign.pub"), pub, 0o644); err != nil { //nolint:gosec // public
		return err
	}
	var lines []string
	for _, a := range []Artifact{b.r.Image, b.r.Manifests, b.r.Chart} {
		lines = append(lines, a.Ref+"@"+a.Digest.String())
	}
	for _, p := range b.o.Platforms {
		lines = append(lines, b.o.imageRepo()+"@"+b.r.Platforms[p].String()+" "+p)
	}
	return os.WriteFile(filepath.Join(b.o.Out, "digests.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644) //nolint:gosec // public
}
