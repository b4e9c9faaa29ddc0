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
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/internal/accessapi"
)

// target and patch are a kustomize (and Flux Kustomization or HelmRelease
// post-renderer) patch: a JSON 6902 patch of the objects target names.
type target struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type patch struct {
	Target target `json:"target"`
	Patch  string `json:"patch"`
}

func ops(g Gomega, ops ...map[string]any) string {
	b, err := json.Marshal(ops)
	g.Expect(err).NotTo(HaveOccurred())
	return string(b)
}

func op(kind, path string, value any) map[string]any {
	return map[string]any{"op": kind, "path": path, "value": value}
}

// renderSample builds config/samples/flux/<sample> through a test overlay
// of patches. The shipped sample is not changed.
func renderSample(t *testing.T, g Gomega, sample string, patches []patch) []*unstructured.Unstructured {
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, repoPath("config", "samples", "flux", sample)) // kustomize refuses absolute roots
	g.Expect(err).NotTo(HaveOccurred())
	overlay, err := yaml.Marshal(map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"resources": []string{rel},
		"patches":   patches,
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), overlay, 0o600)).To(Succeed())
	return build(g, dir)
}

// accessAPI is where the credential-controller serves the access API.
type accessAPI struct {
	dir  string
	port int
}

// patches make kube-apiserver reach the access API on loopback: the
// Service credo-access an ExternalName 'localhost' on its port, as
// tests/devenv does, and the APIService's port that port.
func (a accessAPI) patches(g Gomega) []patch {
	return []patch{
		{Target: target{"Service", "credo-access"}, Patch: ops(g, op("replace", "/spec", map[string]any{
			"type": "ExternalName", "externalName": "localhost",
			"ports": []any{map[string]any{"name": "https", "port": a.port, "protocol": "TCP"}},
		}))},
		{Target: target{"APIService", accessapi.APIServiceName}, Patch: ops(g,
			op("replace", "/spec/service/port", a.port))},
	}
}

// flags are the credential-controller's flags that serve the access API
// there.
func (a accessAPI) flags() []string {
	return []string{"--access-api-secure-port=" + strconv.Itoa(a.port), "--access-api-bind-address=127.0.0.1", "--access-api-cert-dir=" + a.dir}
}
