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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Render renders the chart in chartDir as `helm template` does with Helm
// v4's engine, into namespace, values over the chart's defaults (and
// checked against its schema), and returns its objects in the order of
// their templates' paths.
func Render(chartDir, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart %s: %w", chartDir, err)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, values, common.ReleaseOptions{
		Name: Name, Namespace: namespace, Revision: 1, IsInstall: true,
	}, nil, false)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if path.Ext(name) == ".yaml" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(files[name]), 4096)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(raw) == 0 || string(raw) == "null" {
				continue
			}
			// Through unstructured's JSON, for int64 numbers.
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			objs = append(objs, u)
		}
	}
	return objs, nil
}
