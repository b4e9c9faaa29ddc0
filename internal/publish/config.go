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
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// configExcluded are config/'s directories a release leaves out: the
// samples (install objects, demo tenants) and the test data (Flux's CRDs).
var configExcluded = map[string]bool{"samples": true, "testdata": true}

// ImageName is the image every Deployment of config/manager names; a
// release pins it by digest.
const ImageName = "ghcr.io/credo-dev/credo"

// renderConfig copies src (config/) to dst without configExcluded, every
// file 0644 and directory 0755 whatever the checkout's umask, and pins the
// controllers' image to image@digest in config/manager's kustomization.
func renderConfig(src, dst, image, digest string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && configExcluded[strings.Split(rel, string(filepath.Separator))[0]] {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644) //nolint:gosec // manifests, public
	})
	if err != nil {
		return err
	}
	return pinImage(filepath.Join(dst, "manager", "kustomization.yaml"), image, digest)
}

// pinImage sets the images entry of ImageName in the kustomization file to
// image@digest.
func pinImage(file, image, digest string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	images, _ := k["images"].([]any)
	found := false
	for _, i := range images {
		if m, ok := i.(map[string]any); ok && m["name"] == ImageName {
			delete(m, "newTag")
			m["newName"] = image
			m["digest"] = digest
			found = true
		}
	}
	if !found {
		return fmt.Errorf("%s names no image %s to pin", file, ImageName)
	}
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	header := "# Rendered by credo's release: the controllers' image pinned by digest.\n"
	return os.WriteFile(file, append([]byte(header), out...), 0o644) //nolint:gosec // manifests, public
}
