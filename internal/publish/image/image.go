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

// Package image builds credo's container image without a container engine:
// one OCI image index, one image per platform, each holding every credo
// binary on top of a base layer with the CA certificates and the non-root
// user 65532, from nothing (no base image is pulled). The same inputs give
// the same digests.
package image

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user and group the image runs as, distroless's nonroot: the
// Deployments' runAsNonRoot needs a numeric non-zero user.
const (
	NonRootUID = 65532
	User       = "65532:65532"
)

// CACertificatesPath is where the image carries the CA bundle, where Go's
// crypto/x509 looks for it on Linux.
const CACertificatesPath = "etc/ssl/certs/ca-certificates.crt"

// Spec is what an image index is built from.
type Spec struct {
	// Annotations go on the index, every manifest, and (as labels) every
	// image's configuration: the OCI ones (source, revision, version,
	// created) and any other.
	Annotations map[string]string
	// Created dates the configurations and the layers' entries: the
	// commit's time, so that a rebuild of one commit changes nothing.
	Created time.Time
	// CACertificates is the PEM bundle the image trusts.
	CACertificates []byte
	// Platforms maps "os/arch" to the directory holding that platform's
	// binaries; every regular file in it goes to the image's root.
	Platforms map[string]string
	// Entrypoint is the binary run when a pod names no command.
	Entrypoint string
}

// Built is an image index and its images by platform.
type Built struct {
	Index  v1.ImageIndex
	Images map[string]v1.Image
}

// Build builds the index the spec describes.
func Build(spec Spec) (*Built, error) {
	base, err := Layer(baseFiles(spec.CACertificates), spec.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	platforms := make([]string, 0, len(spec.Platforms))
	for p := range spec.Platforms {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	out := &Built{Images: map[string]v1.Image{}}
	for _, p := range platforms {
		img, platform, err := platformImage(spec, base, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out.Images[p] = img
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: platform, Annotations: spec.Annotations},
		})
	}
	out.Index = mutate.Annotations(idx, spec.Annotations).(v1.ImageIndex)
	return out, nil
}

func platformImage(spec Spec, base v1.Layer, p string) (v1.Image, *v1.Platform, error) {
	osName, arch, ok := strings.Cut(p, "/")
	if !ok {
		return nil, nil, fmt.Errorf("platform %q is not os/arch", p)
	}
	binaries, err := binaryFiles(spec.Platforms[p])
	if err != nil {
		return nil, nil, err
	}
	layer, err := Layer(binaries, spec.Created)
	if err != nil {
		return nil, nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: spec.Created.UTC()}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "credo release: CA certificates, /etc/passwd"}},
		mutate.Addendum{Layer: layer, History: v1.History{Created: created, CreatedBy: "credo release: credo's binaries"}},
	)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = created
	cfg.OS, cfg.Architecture = osName, arch
	cfg.Config.User = User
	cfg.Config.Entrypoint = []string{"/" + spec.Entrypoint}
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"PATH=/"}
	cfg.Config.Labels = spec.Annotations
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, nil, err
	}
	img = mutate.Annotations(img, spec.Annotations).(v1.Image)
	return img, &v1.Platform{OS: osName, Architecture: arch}, nil
}

// baseFiles is what every image carries besides the binaries: the CA
// bundle, the users and groups (root and nonroot, 65532, as distroless
// names them) and a world-writable /tmp.
func baseFiles(caBundle []byte) []File {
	return []File{
		{Path: CACertificatesPath, Mode: 0o644, Data: caBundle},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootUID))},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\n" + fmt.Sprintf("nonroot:x:%d:\n", NonRootUID))},
		{Path: "home/nonroot", Mode: 0o700, Dir: true, UID: NonRootUID, GID: NonRootUID},
		{Path: "tmp", Mode: 0o1777, Dir: true},
	}
}

// binaryFiles reads every regular file of dir as an executable at the
// image's root, owned by root (the image's user may run but not change it).
func binaryFiles(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: e.Name(), Mode: 0o755, Data: data})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no binaries in %s", dir)
	}
	return files, nil
}
