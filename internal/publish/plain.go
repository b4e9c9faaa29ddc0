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
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// PlainManifests are the release's files for `kubectl apply` without Flux:
// the rendered config/default and config/apiservice, by file name.
var PlainManifests = map[string]string{
	"credo.yaml":            "default",
	"credo-access-api.yaml": "apiservice",
}

// writePlainManifests builds each kustomization of the rendered manifests
// in dir into out, one multi-document file each.
func writePlainManifests(dir, out string) error {
	for file, kustomization := range PlainManifests {
		resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, kustomization))
		if err != nil {
			return fmt.Errorf("kustomize build %s: %w", kustomization, err)
		}
		data, err := resources.AsYaml()
		if err != nil {
			return err
		}
		header := fmt.Sprintf("# credo's config/%s, rendered by its release: kubectl apply --server-side -f %s\n", kustomization, file)
		if err := os.WriteFile(filepath.Join(out, file), append([]byte(header), data...), 0o644); err != nil { //nolint:gosec // public
			return err
		}
	}
	return nil
}

// Export writes the image of one platform of the release's image index as
// a `docker save` tarball tagged tag, for what loads images only that way
// (`kind load image-archive`).
func Export(dir, platform, tag, file string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		return err
	}
	root, err := p.ImageIndex()
	if err != nil {
		return err
	}
	manifest, err := root.IndexManifest()
	if err != nil {
		return err
	}
	want, err := v1.ParsePlatform(platform)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	for _, d := range manifest.Manifests {
		if !d.MediaType.IsIndex() {
			continue
		}
		idx, err := root.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return err
		}
		for _, m := range im.Manifests {
			if m.Platform != nil && m.Platform.Satisfies(*want) {
				img, err := idx.Image(m.Digest)
				if err != nil {
					return err
				}
				return tarball.WriteToFile(file, ref, img)
			}
		}
	}
	return fmt.Errorf("the release in %s has no image for %s", dir, platform)
}
