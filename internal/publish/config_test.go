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
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// configDir is the repository's config/, from this package's directory.
var configDir = filepath.Join("..", "..", "config")

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestRenderConfigPinsEveryDeploymentsImage(t *testing.T) {
	for _, image := range []string{ImageName, "localhost:5000/credo-dev/credo"} {
		t.Run(image, func(t *testing.T) {
			g := NewWithT(t)
			original, err := os.ReadFile(filepath.Join(configDir, "manager", "kustomization.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
			dst := filepath.Join(t.TempDir(), "manifests")
			g.Expect(renderConfig(configDir, dst, image, testDigest)).To(Succeed())

			for _, dir := range []string{"crd", "rbac", "manager", "admission", "default"} {
				g.Expect(filepath.Join(dst, dir)).To(BeADirectory())
			}
			g.Expect(filepath.Join(dst, "samples")).NotTo(BeAnExistingFile(), "the samples are not released")
			g.Expect(filepath.Join(dst, "testdata")).NotTo(BeAnExistingFile(), "the test data is not released")
			g.Expect(filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				want := fs.FileMode(0o644)
				if d.IsDir() {
					want = 0o755 | fs.ModeDir
				}
				g.Expect(info.Mode()).To(Equal(want), p)
				return nil
			})).To(Succeed())

			deployments := 0
			for _, obj := range kustomize(g, filepath.Join(dst, "default")) {
				if obj.GetKind() != "Deployment" {
					continue
				}
				deployments++
				images := 0
				for _, field := range []string{"containers", "initContainers"} {
					containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", field)
					g.Expect(err).NotTo(HaveOccurred())
					for _, c := range containers {
						g.Expect(c).To(HaveKeyWithValue("image", image+"@"+testDigest), "%s %s", obj.GetName(), field)
						images++
					}
				}
				g.Expect(images).To(BeNumerically(">", 0), "%s has containers", obj.GetName())
			}
			g.Expect(deployments).To(BeNumerically(">=", 3), "config/default has the three controllers")

			after, err := os.ReadFile(filepath.Join(configDir, "manager", "kustomization.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(after)).To(Equal(string(original)), "the checkout's config/ is left alone")
		})
	}
}

func TestPinImageRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, kustomization, errMsg string
	}{
		{"a kustomization with no images", "resources:\n  - a.yaml\n",
			"names no image ghcr.io/credo-dev/credo to pin"},
		{"a kustomization naming another image",
			"images:\n  - name: ghcr.io/credo-dev/other\n    newTag: latest\n",
			"names no image ghcr.io/credo-dev/credo to pin"},
		{"what is not YAML", "images: [\n", "kustomization.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			file := filepath.Join(t.TempDir(), "kustomization.yaml")
			g.Expect(os.WriteFile(file, []byte(tc.kustomization), 0o600)).To(Succeed())
			g.Expect(pinImage(file, ImageName, testDigest)).To(MatchError(ContainSubstring(tc.errMsg)))
			after, err := os.ReadFile(file)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(after)).To(Equal(tc.kustomization), "a refused file is left as it was")
		})
	}
	g := NewWithT(t)
	g.Expect(pinImage(filepath.Join(t.TempDir(), "kustomization.yaml"), ImageName, testDigest)).NotTo(Succeed())
}

// kustomize builds dir as `kubectl kustomize` does.
func kustomize(g Gomega, dir string) []*unstructured.Unstructured {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	g.Expect(err).NotTo(HaveOccurred())
	var objs []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		raw, err := r.MarshalJSON()
		g.Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{}
		g.Expect(u.UnmarshalJSON(raw)).To(Succeed())
		objs = append(objs, u)
	}
	return objs
}
