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

package fluxinstall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/testenv"
)

// Target and Patch are a kustomize (and Flux Kustomization or HelmRelease
// post-renderer) patch: a JSON 6902 patch of the objects Target names.
type Target struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Patch is one patch of an overlay.
type Patch struct {
	Target Target `json:"target"`
	Patch  string `json:"patch"`
}

// Ops is a JSON 6902 patch of ops.
func Ops(g Gomega, ops ...map[string]any) string {
	b, err := json.Marshal(ops)
	g.Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// Op is one operation of a JSON 6902 patch.
func Op(kind, path string, value any) map[string]any {
	return map[string]any{"op": kind, "path": path, "value": value}
}

// RenderSample builds sampleDir (config/samples/flux/<sample> of some
// tree) through a test overlay of patches, written in dir. The sample is
// not changed.
func RenderSample(g Gomega, dir, sampleDir string, patches []Patch) []*unstructured.Unstructured {
	rel, err := filepath.Rel(dir, sampleDir) // kustomize refuses absolute roots
	g.Expect(err).NotTo(HaveOccurred())
	overlay, err := yaml.Marshal(map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"resources": []string{rel},
		"patches":   patches,
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), overlay, 0o600)).To(Succeed())
	objs, err := testenv.Kustomize(dir)
	g.Expect(err).NotTo(HaveOccurred())
	return objs
}

// AccessAPI is where the credential-controller serves the access API.
type AccessAPI struct {
	Dir  string
	Port int
}

// Patches make kube-apiserver reach the access API on loopback: the
// Service credo-access an ExternalName 'localhost' on its port, as
// tests/devenv does, and the APIService's port that port.
func (a AccessAPI) Patches(g Gomega) []Patch {
	return []Patch{
		{Target: Target{"Service", "credo-access"}, Patch: Ops(g, Op("replace", "/spec", map[string]any{
			"type": "ExternalName", "externalName": "localhost",
			"ports": []any{map[string]any{"name": "https", "port": a.Port, "protocol": "TCP"}},
		}))},
		{Target: Target{"APIService", accessapi.APIServiceName}, Patch: Ops(g,
			Op("replace", "/spec/service/port", a.Port))},
	}
}

// Flags are the credential-controller's flags that serve the access API
// there.
func (a AccessAPI) Flags() []string {
	return []string{"--access-api-secure-port=" + strconv.Itoa(a.Port), "--access-api-bind-address=127.0.0.1", "--access-api-cert-dir=" + a.Dir}
}
