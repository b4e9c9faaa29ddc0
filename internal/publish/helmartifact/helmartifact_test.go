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

package helmartifact_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish/chart"
	"github.com/credo-dev/credo/internal/publish/helmartifact"
)

// chartDir is the repository's charts/credo, from this package's directory.
var chartDir = filepath.Join("..", "..", "..", "charts", "credo")

var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestBuildIsHelmsOCIChartFormat(t *testing.T) {
	g := NewWithT(t)
	tgz, err := chart.Package(chartDir, chart.PackageOptions{Version: "0.1.0", AppVersion: "v0.1.0", ModTime: created})
	g.Expect(err).NotTo(HaveOccurred())
	img, meta, err := helmartifact.Build(tgz, created)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(meta.Name).To(Equal("credo"))
	g.Expect(meta.Version).To(Equal("0.1.0"))
	g.Expect(meta.AppVersion).To(Equal("v0.1.0"))

	manifest, err := img.Manifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.Config.MediaType).To(BeEquivalentTo("application/vnd.cncf.helm.config.v1+json"))
	g.Expect(manifest.Annotations).To(HaveKeyWithValue("org.opencontainers.image.created", "2026-01-02T03:04:05Z"))
	g.Expect(manifest.Annotations).To(HaveKeyWithValue("org.opencontainers.image.version", "0.1.0"))

	raw, err := img.RawConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	configDigest, _, err := v1.SHA256(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(manifest.Config.Digest).To(Equal(configDigest), "the manifest names the config it holds")
	var config map[string]any
	g.Expect(json.Unmarshal(raw, &config)).To(Succeed())
	g.Expect(config).To(HaveKeyWithValue("name", "credo"))
	g.Expect(config).To(HaveKeyWithValue("version", "0.1.0"))
	g.Expect(config).To(HaveKeyWithValue("apiVersion", "v2"), "the config is the whole of Chart.yaml")

	g.Expect(manifest.Layers).To(HaveLen(1))
	g.Expect(manifest.Layers[0].MediaType).To(BeEquivalentTo("application/vnd.cncf.helm.chart.content.v1.tar+gzip"))
	layers, err := img.Layers()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := layers[0].Compressed()
	g.Expect(err).NotTo(HaveOccurred())
	defer rc.Close()
	content, err := io.ReadAll(rc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Equal(content, tgz)).To(BeTrue(), "the layer is the chart's .tgz")

	again, _, err := helmartifact.Build(tgz, created)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Digest()).To(Equal(want))
}

func TestBuiltChartPushesAndPullsUnchanged(t *testing.T) {
	g := NewWithT(t)
	tgz, err := chart.Package(chartDir, chart.PackageOptions{Version: "0.1.0", ModTime: created})
	g.Expect(err).NotTo(HaveOccurred())
	img, _, err := helmartifact.Build(tgz, created)
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/charts/credo:0.1.0")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remote.Write(ref, img, remote.WithContext(t.Context()))).To(Succeed())

	pulled, err := remote.Image(ref, remote.WithContext(t.Context()))
	g.Expect(err).NotTo(HaveOccurred())
	want, err := img.RawManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pulled.RawManifest()).To(Equal(want))
	wantConfig, err := img.RawConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pulled.RawConfigFile()).To(Equal(wantConfig))
	layers, err := pulled.Layers()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(layers).To(HaveLen(1))
	rc, err := layers[0].Compressed()
	g.Expect(err).NotTo(HaveOccurred())
	defer rc.Close()
	content, err := io.ReadAll(rc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Equal(content, tgz)).To(BeTrue())
}

func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tgz    []byte
		errMsg string
	}{
		{"a chart with no Chart.yaml", tgzOf(t, map[string]string{"credo/values.yaml": "a: 1\n"}),
			"the chart has no Chart.yaml"},
		{"a chart whose only Chart.yaml is a subchart's", tgzOf(t, map[string]string{
			"credo/values.yaml": "a: 1\n", "credo/charts/sub/Chart.yaml": "name: sub\nversion: 0.1.0\n",
		}), "the chart has no Chart.yaml"},
		{"what is not a gzipped tarball", []byte("Chart.yaml"), "the chart is not a gzipped tarball"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, _, err := helmartifact.Build(tc.tgz, created)
			g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
		})
	}
}

func tgzOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
