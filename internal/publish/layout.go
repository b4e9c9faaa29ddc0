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
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// RefAnnotation names, in the release's OCI layout, the reference each
// artifact is pushed to: repository and tag.
const RefAnnotation = "org.opencontainers.image.ref.name"

// entry is one artifact of the release: an image index or a manifest, and
// the reference it goes to.
type entry struct {
	ref   string
	index v1.ImageIndex
	image v1.Image
}

func (e entry) digest() (v1.Hash, error) {
	if e.index != nil {
		return e.index.Digest()
	}
	return e.image.Digest()
}

// writeLayout writes entries, in their order, to a new OCI image layout at
// dir.
func writeLayout(dir string, entries []entry) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, e := range entries {
		opt := layout.WithAnnotations(map[string]string{RefAnnotation: e.ref})
		if e.index != nil {
			err = p.AppendIndex(e.index, opt)
		} else {
			err = p.AppendImage(e.image, opt)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.ref, err)
		}
	}
	return nil
}

// Push pushes every artifact of the release's OCI layout at dir to its
// reference, with the registry prefix from replaced by to
// ("ghcr.io/credo-dev" by "localhost:5000/credo-dev"); an empty to pushes
// where the release names. Digests do not change: signatures still hold.
func Push(ctx context.Context, dir, from, to string, opts ...remote.Option) ([]Artifact, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	root, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	manifest, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	// Every target first: a release is pushed whole or not at all when one
	// of its references is wrong.
	targets := make([]string, 0, len(manifest.Manifests))
	refs := make([]name.Reference, 0, len(manifest.Manifests))
	for _, d := range manifest.Manifests {
		target, ref, err := pushTarget(d, dir, from, to)
		if err != nil {
			return nil, err
		}
		targets, refs = append(targets, target), append(refs, ref)
	}
	opts = append(opts, remote.WithContext(ctx))
	var pushed []Artifact
	for i, d := range manifest.Manifests {
		target, ref := targets[i], refs[i]
		switch d.MediaType {
		case types.OCIImageIndex, types.DockerManifestList:
			idx, err := root.ImageIndex(d.Digest)
			if err == nil {
				err = remote.WriteIndex(ref, idx, opts...)
			}
			if err != nil {
				return nil, fmt.Errorf("pushing %s: %w", target, err)
			}
		default:
			img, err := root.Image(d.Digest)
			if err == nil {
				err = remote.Write(ref, img, opts...)
			}
			if err != nil {
				return nil, fmt.Errorf("pushing %s: %w", target, err)
			}
		}
		pushed = append(pushed, Artifact{Ref: target, Digest: d.Digest})
	}
	if len(pushed) == 0 {
		return nil, errors.New("the layout holds nothing to push")
	}
	return pushed, nil
}

// pushTarget is where the layout's entry d goes: its reference, with the
// prefix from replaced by to unless to is empty, as given and parsed.
func pushTarget(d v1.Descriptor, dir, from, to string) (string, name.Reference, error) {
	target := d.Annotations[RefAnnotation]
	if target == "" {
		return "", nil, fmt.Errorf("%s in %s names no reference (%s)", d.Digest, dir, RefAnnotation)
	}
	if to != "" {
		if !strings.HasPrefix(target, from+"/") {
			return "", nil, fmt.Errorf("%s is not under %s", target, from)
		}
		target = to + strings.TrimPrefix(target, from)
	}
	ref, err := name.ParseReference(target)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", target, err)
	}
	return target, ref, nil
}
