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

package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// originAnnotation is where kustomize's buildMetadata originAnnotations
// records the file an object came from.
const originAnnotation = "config.kubernetes.io/origin"

// object is one built object and the file of config/ it came from,
// relative to config/ (e.g. manager/trust-controller.yaml).
type object struct {
	node   *yaml.RNode
	origin string
}

// kind and name of the object.
func (o object) kind() string { return o.node.GetKind() }
func (o object) name() string { return o.node.GetName() }

// installOverlay builds what config/default and config/apiservice install,
// with the apiservice's NetworkPolicy component, which the chart gates by a
// value. No namespace: apiservice's RoleBinding lives in kube-system.
const installOverlay = `resources:
  - {{config}}/default
  - {{config}}/apiservice
components:
  - {{config}}/apiservice/networkpolicy
`

// monitoringOverlay builds config/monitoring's objects (it has no
// kustomization of its own): kube-state-metrics' ClusterRole, the
// PrometheusRule, and kube-state-metrics' CustomResourceState configuration
// (not an object) in a ConfigMap to mount.
const monitoringOverlay = `namespace: credo-system
resources:
  - {{config}}/monitoring/kube-state-metrics-rbac.yaml
  - {{config}}/monitoring/prometheus-rules.yaml
configMapGenerator:
  - name: credo-kube-state-metrics
    files:
      - config.yaml={{config}}/monitoring/kube-state-metrics.yaml
    options:
      disableNameSuffixHash: true
      labels:
        app.kubernetes.io/part-of: credo
`

// build runs kustomize on an overlay of configDir (installOverlay or
// monitoringOverlay, {{config}} standing for configDir), recording where
// each object came from.
func build(configDir, overlay string) ([]object, error) {
	abs, err := filepath.Abs(configDir)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "credo-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// kustomize refuses absolute paths of bases, not relative ones that
	// leave the root (with LoadRestrictionsNone).
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return nil, err
	}
	k := strings.ReplaceAll(overlay, "{{config}}", filepath.ToSlash(rel)) + "buildMetadata: [originAnnotations]\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	resMap, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build of %s: %w", configDir, err)
	}
	var objs []object
	for _, r := range resMap.Resources() {
		raw, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		node, err := yaml.Parse(string(raw))
		if err != nil {
			return nil, err
		}
		origin, err := takeOrigin(node, dir, abs)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
		objs = append(objs, object{node: node, origin: origin})
	}
	return objs, nil
}

// takeOrigin removes the origin annotation from node and returns its path
// relative to configDir. A generated ConfigMap has no origin file: its
// origin is its generator's overlay, and it gets the path
// monitoring/<name>.yaml.
func takeOrigin(node *yaml.RNode, overlayDir, configDir string) (string, error) {
	annotations := node.GetAnnotations()
	raw, ok := annotations[originAnnotation]
	if !ok {
		return "", fmt.Errorf("no %s annotation", originAnnotation)
	}
	delete(annotations, originAnnotation)
	if err := node.SetAnnotations(annotations); err != nil {
		return "", err
	}
	if len(annotations) == 0 {
		meta, err := node.Pipe(yaml.Lookup(yaml.MetadataField))
		if err != nil {
			return "", err
		}
		if _, err := meta.Pipe(yaml.Clear(yaml.AnnotationsField)); err != nil {
			return "", err
		}
	}
	var origin struct {
		Path         string `json:"path"`
		ConfiguredIn string `json:"configuredIn"`
	}
	if err := yaml.Unmarshal([]byte(raw), &origin); err != nil {
		return "", fmt.Errorf("%s: %w", originAnnotation, err)
	}
	if origin.Path == "" {
		return "monitoring/" + node.GetName() + ".yaml", nil
	}
	rel, err := filepath.Rel(configDir, filepath.Join(overlayDir, origin.Path))
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("origin %s is outside %s", origin.Path, configDir)
	}
	return filepath.ToSlash(rel), nil
}
