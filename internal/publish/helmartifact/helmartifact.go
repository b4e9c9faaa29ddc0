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

// Package helmartifact builds the OCI artifact of a packaged Helm chart, in
// the format `helm push` writes and Helm, Flux's HelmRepository (type oci)
// and OCIRepository (with the chart's layerSelector) read: Helm's config
// media type holding Chart.yaml as JSON, and the chart's .tgz as the one
// layer.
package helmartifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// Helm's media types.
const (
	ConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	ChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Metadata is what the artifact reads of the chart's Chart.yaml.
type Metadata struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion,omitempty"`
	Description string `json:"description,omitempty"`
	Home        string `json:"home,omitempty"`
}

// Build returns the artifact of the packaged chart tgz, dated created, and
// the chart's metadata.
func Build(tgz []byte, created time.Time) (v1.Image, *Metadata, error) {
	chartYAML, err := chartFile(tgz)
	if err != nil {
		return nil, nil, err
	}
	var meta Metadata
	if err := yaml.Unmarshal(chartYAML, &meta); err != nil {
		return nil, nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	// Helm stores the whole of Chart.yaml as the config, as JSON.
	config, err := yaml.YAMLToJSON(chartYAML)
	if err != nil {
		return nil, nil, err
	}
	layer := static.NewLayer(tgz, ChartMediaType)
	layerDesc, err := partial.Descriptor(layer)
	if err != nil {
		return nil, nil, err
	}
	configDigest, configSize, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, nil, err
	}
	manifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: ConfigMediaType, Digest: configDigest, Size: configSize},
		Layers:        []v1.Descriptor{*layerDesc},
		Annotations: map[string]string{
			"org.opencontainers.image.title":       meta.Name,
			"org.opencontainers.image.version":     meta.Version,
			"org.opencontainers.image.description": meta.Description,
			"org.opencontainers.image.url":         meta.Home,
			"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
		},
	})
	if err != nil {
		return nil, nil, err
	}
	img, err := partial.CompressedToImage(&artifact{config: config, manifest: manifest, layer: layer})
	if err != nil {
		return nil, nil, err
	}
	return img, &meta, nil
}

// chartFile returns <chart>/Chart.yaml from the packaged chart.
func chartFile(tgz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("the chart is not a gzipped tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the chart has no Chart.yaml")
		}
		if err != nil {
			return nil, err
		}
		if dir, file := path.Split(h.Name); file == "Chart.yaml" && path.Dir(path.Clean(dir)) == "." {
			return io.ReadAll(tr)
		}
	}
}

// artifact is an OCI manifest whose config is not an image's: ggcr's
// mutate package would rewrite it as one.
type artifact struct {
	config, manifest []byte
	layer            v1.Layer
}

func (a *artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, err := a.layer.Digest(); err == nil && d == h {
		return a.layer, nil
	}
	return nil, fmt.Errorf("the chart artifact has no blob %s", h)
}
