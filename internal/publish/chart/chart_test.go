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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	syaml "sigs.k8s.io/yaml"
)

// The repository's config/ and committed chart, from this package's directory.
var (
	configDir = filepath.Join("..", "..", "..", "config")
	chartDir  = filepath.Join("..", "..", "..", "charts", Name)
)

func TestCommittedChartIsGeneratedFromConfig(t *testing.T) {
	g := NewWithT(t)
	files, err := Generate(configDir)
	g.Expect(err).NotTo(HaveOccurred())
	var committed []string
	g.Expect(filepath.WalkDir(chartDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chartDir, p)
		committed = append(committed, filepath.ToSlash(rel))
		return nil
	})).To(Succeed())
	var generated []string
	for name := range files {
		generated = append(generated, name)
	}
	g.Expect(committed).To(ConsistOf(generated), "run make manifests")
	for name, data := range files {
		raw, err := os.ReadFile(filepath.Join(chartDir, filepath.FromSlash(name)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(raw)).To(Equal(string(data)), "%s differs from what config/ generates: run make manifests", name)
	}
}

// kustomize builds dirs of config/ as `kubectl kustomize` does, through JSON
// for the number types.
func kustomize(g Gomega, dirs ...string) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, dir := range dirs {
		resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(configDir, dir))
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range resMap.Resources() {
			raw, err := r.MarshalJSON()
			g.Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{}
			g.Expect(u.UnmarshalJSON(raw)).To(Succeed())
			objs = append(objs, u)
		}
	}
	return objs
}

func render(g Gomega, namespace string, values map[string]any) []*unstructured.Unstructured {
	objs, err := Render(chartDir, namespace, values)
	g.Expect(err).NotTo(HaveOccurred())
	return objs
}

// key names an object: "Kind namespace/name".
func key(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// normalised returns the objects by key, as YAML, with what may differ
// between the chart and kustomize normalised: each container's args sorted
// (the chart renders flags sorted by name) and the CRDs'
// helm.sh/resource-policy annotation (crds.keep) removed.
func normalised(g Gomega, objs []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetKind() == "CustomResourceDefinition" {
			a := o.GetAnnotations()
			delete(a, "helm.sh/resource-policy")
			o.SetAnnotations(a)
		}
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				c := c.(map[string]any)
				if args, ok := c["args"].([]any); ok {
					sort.Slice(args, func(i, j int) bool { return args[i].(string) < args[j].(string) })
				}
			}
			g.Expect(unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
		}
		raw, err := syaml.Marshal(o.Object)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).NotTo(HaveKey(key(o)), "twice")
		out[key(o)] = string(raw)
	}
	return out
}

// The drift test: with its defaults, into credo-system, the committed chart
// renders what kustomize builds of config/default and config/apiservice
// now, but the Namespace.
func TestChartRendersWhatConfigInstalls(t *testing.T) {
	g := NewWithT(t)
	var want []*unstructured.Unstructured
	for _, o := range kustomize(g, "default", "apiservice") {
		if o.GetKind() != "Namespace" {
			want = append(want, o)
		}
	}
	got := normalised(g, render(g, DefaultNamespace, nil))
	wantByKey := normalised(g, want)
	g.Expect(sortedKeys(got)).To(Equal(sortedKeys(wantByKey)))
	for k, w := range wantByKey {
		g.Expect(got[k]).To(Equal(w), "%s: the chart renders it otherwise than config/ (make manifests)", k)
	}
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestChartRendersIntoTheReleaseNamespace(t *testing.T) {
	g := NewWithT(t)
	const ns = "platform-credo"
	objs := render(g, ns, map[string]any{
		"monitoring":    map[string]any{"enabled": true},
		"networkPolicy": map[string]any{"enabled": true},
	})
	for _, o := range objs {
		raw, err := syaml.Marshal(o.Object)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(raw)).NotTo(ContainSubstring(DefaultNamespace), key(o))
		switch {
		case o.GetName() == "credo-access:extension-apiserver-authentication-reader":
			g.Expect(o.GetNamespace()).To(Equal("kube-system"))
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			g.Expect(subjects).To(ConsistOf(HaveKeyWithValue("namespace", ns)))
		case o.GetKind() == "Namespace":
			t.Errorf("the chart creates the namespace %s", o.GetName())
		}
	}
	apisvc := byKind(objs, "APIService")[0]
	svcNS, _, _ := unstructured.NestedString(apisvc.Object, "spec", "service", "namespace")
	g.Expect(svcNS).To(Equal(ns))
	g.Expect(strings.Join(args(g, objs, "enrollment-controller"), " ")).To(ContainSubstring("--enrollment-hosts=enrollment." + ns + ".svc,localhost"))
}

func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// deployment returns the Deployment name of objs.
func deployment(g Gomega, objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
	for _, o := range byKind(objs, "Deployment") {
		if o.GetName() == name {
			return o
		}
	}
	g.Expect(name).To(BeEmpty(), "no Deployment")
	return nil
}

// container returns the manager container of a Deployment of objs.
func container(g Gomega, objs []*unstructured.Unstructured, name string) map[string]any {
	containers, _, _ := unstructured.NestedSlice(deployment(g, objs, name).Object, "spec", "template", "spec", "containers")
	g.Expect(containers).To(HaveLen(1))
	return containers[0].(map[string]any)
}

func args(g Gomega, objs []*unstructured.Unstructured, name string) []string {
	var out []string
	for _, a := range container(g, objs, name)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}
