//go:build e2e

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

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chartVersion is the version of every chart under testdata/charts.
const chartVersion = "0.1.0"

// serveChart packages testdata/charts/<name> and serves it on loopback
// until the test ends, as source-controller serves an artifact, and returns
// the artifact an ExternalArtifact's status gives helm-controller (which
// checks the digest of what it downloads).
func serveChart(t testing.TB, name string) *meta.Artifact {
	t.Helper()
	tgz, err := packageChart(filepath.Join("testdata", "charts", name), name)
	if err != nil {
		t.Fatal(err)
	}
	file := name + "-" + chartVersion + ".tgz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+file {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(tgz)
	}))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(tgz)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	size := int64(len(tgz))
	return &meta.Artifact{
		Path:           file,
		URL:            srv.URL + "/" + file,
		Revision:       chartVersion + "@" + digest,
		Digest:         digest,
		LastUpdateTime: metav1.Now(),
		Size:           &size,
	}
}

// packageChart packs the chart in dir as `helm package` does: a gzipped
// tar of its files under <name>/.
func packageChart(dir, name string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
