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

// Package publish builds a credo release from a checkout, with no container
// engine and nothing pulled from a registry: the binaries for every
// platform, the image index holding them, an SPDX SBOM per platform, the
// config/ manifests pinned to the image's digest as a Flux OCI artifact, the
// Helm chart as an OCI artifact, and cosign signatures of all of them, into
// one OCI image layout (Push sends it to a registry). One commit gives the
// same digests on every build.
package publish

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/mod/semver"

	"github.com/credo-dev/credo/internal/publish/fluxartifact"
	"github.com/credo-dev/credo/internal/publish/image"
	"github.com/credo-dev/credo/internal/publish/signing"
)

// Defaults of Options.
const (
	DefaultRegistry       = "ghcr.io/credo-dev"
	DefaultSource         = "https://github.com/credo-dev/credo"
	DefaultCACertificates = "/etc/ssl/certs/ca-certificates.crt"
)

// DefaultPlatforms are the platforms a release is built for.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// Options say what to release and where to.
type Options struct {
	// Root is the checkout (a git work tree) to build.
	Root string
	// Version is the release, a semantic version with its "v" (v0.1.0).
	Version string
	// Out receives the release; it is replaced.
	Out string
	// Registry is where the artifacts are named to go: the image is
	// <Registry>/credo, the manifests <Registry>/manifests/credo, the chart
	// <Registry>/charts/credo.
	Registry string
	// Source is the repository's URL, for the annotations.
	Source string
	// Platforms to build, "os/arch".
	Platforms []string
	// CACertificates is the CA bundle the image carries: Debian's
	// ca-certificates.
	CACertificates string
	// Signer signs every artifact.
	Signer *signing.Signer
	// AllowDirty builds a work tree with uncommitted changes (tests do); a
	// release is built from a commit.
	AllowDirty bool
}

// Artifact is one artifact of a release.
type Artifact struct {
	// Ref is the repository and tag it is pushed to.
	Ref    string
	Digest v1.Hash
}

// Result is what a release built.
type Result struct {
	// Image is the image index; Platforms its images by "os/arch".
	Image     Artifact
	Platforms map[string]v1.Hash
	// Manifests is config/ as a Flux OCI artifact; Chart the Helm chart.
	Manifests, Chart Artifact
	// Commit and Created are the commit built and its time.
	Commit  string
	Created time.Time
	// Layout is the OCI image layout holding everything, signatures and
	// SBOMs included.
	Layout string
}

// Repositories of a release under its registry.
func (o Options) imageRepo() string     { return o.Registry + "/credo" }
func (o Options) manifestsRepo() string { return o.Registry + "/manifests/credo" }
func (o Options) chartRepo() string     { return o.Registry + "/charts/credo" }

// Release builds the release o describes into o.Out.
func Release(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	// semver.IsValid takes v1 and v1.2 (neither a chart version) and build
	// metadata (no OCI tag holds a "+"): a release is the canonical form.
	if !semver.IsValid(o.Version) || semver.Canonical(o.Version) != o.Version {
		return nil, fmt.Errorf("version %q is not a release version, v<major>.<minor>.<patch>[-<prerelease>] (v0.1.0)", o.Version)
	}
	if o.Signer == nil {
		return nil, fmt.Errorf("no signing key: a release is signed")
	}
	commit, created, err := commitOf(ctx, o.Root, o.AllowDirty)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, err
	}
	r := &Result{Commit: commit, Created: created, Platforms: map[string]v1.Hash{}, Layout: filepath.Join(o.Out, "oci")}
	b := &builder{o: o, r: r}
	steps := []func(context.Context) error{b.binaries, b.image, b.sboms, b.manifests, b.chart, b.sign, b.files}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if err := writeLayout(r.Layout, b.entries); err != nil {
		return nil, err
	}
	return r, nil
}

func (o *Options) defaults() {
	if o.Registry == "" {
		o.Registry = DefaultRegistry
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms
	}
	if o.CACertificates == "" {
		o.CACertificates = DefaultCACertificates
	}
}

// commitOf returns the checked-out commit and its committer time, refusing
// uncommitted changes unless allowDirty.
func commitOf(ctx context.Context, root string, allowDirty bool) (string, time.Time, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), root, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if !allowDirty {
		status, err := git("status", "--porcelain")
		if err != nil {
			return "", time.Time{}, err
		}
		if status != "" {
			return "", time.Time{}, fmt.Errorf("%s has uncommitted changes: a release is built from a commit\n%s", root, status)
		}
	}
	line, err := git("show", "-s", "--format=%H %ct", "HEAD")
	if err != nil {
		return "", time.Time{}, err
	}
	sha, secs, _ := strings.Cut(line, " ")
	unix, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("commit time %q: %w", secs, err)
	}
	return sha, time.Unix(unix, 0).UTC(), nil
}

// builder carries a release through its steps.
type builder struct {
	o       Options
	r       *Result
	index   *image.Built
	entries []entry
	// signed are the artifacts to sign; their Ref is the repository, with
	// no tag.
	signed []Artifact
}

func (b *builder) binDir(platform string) string {
	return filepath.Join(b.o.Out, "bin", strings.ReplaceAll(platform, "/", "_"))
}

func (b *builder) binaries(ctx context.Context) error {
	for _, p := range b.o.Platforms {
		if err := buildBinaries(ctx, b.o.Root, p, b.o.Version, b.r.Commit, b.binDir(p)); err != nil {
			return err
		}
	}
	return nil
}

// annotations are the OCI annotations of the image and its manifests.
func (b *builder) annotations() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "credo",
		"org.opencontainers.image.description": "credo's controllers, agent and kubectl plugin",
		"org.opencontainers.image.source":      b.o.Source,
		"org.opencontainers.image.url":         b.o.Source,
		"org.opencontainers.image.revision":    b.r.Commit,
		"org.opencontainers.image.version":     b.o.Version,
		"org.opencontainers.image.created":     b.r.Created.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

func (b *builder) image(context.Context) error {
	ca, err := os.ReadFile(b.o.CACertificates)
	if err != nil {
		return fmt.Errorf("the image's CA certificates (Debian's ca-certificates: apt-get install ca-certificates): %w", err)
	}
	dirs := map[string]string{}
	for _, p := range b.o.Platforms {
		dirs[p] = b.binDir(p)
	}
	b.index, err = image.Build(image.Spec{
		Annotations: b.annotations(), Created: b.r.Created, CACertificates: ca,
		Platforms: dirs, Entrypoint: "trust-controller",
	})
	if err != nil {
		return err
	}
	digest, err := b.index.Index.Digest()
	if err != nil {
		return err
	}
	b.r.Image = Artifact{Ref: b.o.imageRepo() + ":" + b.o.Version, Digest: digest}
	b.entries = append(b.entries, entry{ref: b.r.Image.Ref, index: b.index.Index})
	b.signed = append(b.signed, Artifact{Ref: b.o.imageRepo(), Digest: digest})
	platforms := make([]string, 0, len(b.index.Images))
	for p := range b.index.Images {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		d, err := b.index.Images[p].Digest()
		if err != nil {
			return err
		}
		b.r.Platforms[p] = d
		b.signed = append(b.signed, Artifact{Ref: b.o.imageRepo(), Digest: d})
	}
	return nil
}

func (b *builder) manifests(context.Context) error {
	dir := filepath.Join(b.o.Out, "manifests")
	if err := renderConfig(filepath.Join(b.o.Root, "config"), dir, b.o.imageRepo(), b.r.Image.Digest.String()); err != nil {
		return fmt.Errorf("rendering config/: %w", err)
	}
	if err := writePlainManifests(dir, b.o.Out); err != nil {
		return err
	}
	img, err := fluxartifact.Build(dir, fluxartifact.Meta{
		Source: b.o.Source, Revision: b.o.Version + "@sha1:" + b.r.Commit, Created: b.r.Created,
	})
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	b.r.Manifests = Artifact{Ref: b.o.manifestsRepo() + ":" + b.o.Version, Digest: digest}
	b.entries = append(b.entries, entry{ref: b.r.Manifests.Ref, image: img})
	b.signed = append(b.signed, Artifact{Ref: b.o.manifestsRepo(), Digest: digest})
	return nil
}

// sign signs every artifact, the image's platforms included (as cosign sign
// --recursive does), each signature tagged where cosign looks for it.
func (b *builder) sign(context.Context) error {
	for _, s := range b.signed {
		sig, err := b.o.Signer.Sign(s.Ref, s.Digest)
		if err != nil {
			return fmt.Errorf("signing %s@%s: %w", s.Ref, s.Digest, err)
		}
		b.entries = append(b.entries, entry{ref: s.Ref + ":" + signing.Tag(s.Digest), image: sig})
	}
	return nil
}
