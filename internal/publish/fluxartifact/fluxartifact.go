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

// Package fluxartifact builds an OCI artifact of a directory in the format
// `flux push artifact` pushes and Flux's source-controller reads through an
// OCIRepository: Flux's config media type, one gzipped tarball layer made by
// fluxcd/pkg/oci, and the source, revision and created annotations.
package fluxartifact

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxcd/pkg/oci"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Meta is what the artifact says of its origin.
type Meta struct {
	// Source is the repository's URL, Revision "<tag>@sha1:<commit>", as
	// `flux push artifact --source --revision` take them.
	Source, Revision string
	// Created is the commit's time.
	Created time.Time
}

// Build returns the artifact of dir. fluxcd/pkg/oci's tarball has no
// timestamps or owners, so one tree gives one digest.
func Build(dir string, meta Meta) (v1.Image, error) {
	tmp, err := os.MkdirTemp("", "credo-artifact-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tgz := filepath.Join(tmp, "artifact.tgz")
	if err := oci.NewClient(nil).Build(tgz, dir, nil); err != nil {
		return nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	content, err := os.ReadFile(tgz)
	if err != nil {
		return nil, err
	}
	created := meta.Created.UTC()
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), oci.CanonicalConfigMediaType)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: created}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	img = mutate.Annotations(img, (&oci.Metadata{
		Created:  created.Format(time.RFC3339),
		Source:   meta.Source,
		Revision: meta.Revision,
	}).ToAnnotations()).(v1.Image)
	return mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(content, oci.CanonicalContentMediaType)})
}
