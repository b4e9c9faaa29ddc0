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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chartVersion is the version of every chart under testdata/charts.
const chartVersion = "0.1.0"

// serveChart packages testdata/charts/<name> and serves it on loopback
// for the rest of the run, as source-controller serves an artifact, and
// returns the artifact an ExternalArtifact's status gives helm-controller
// (which checks the digest of what it downloads).
//
// The server outlives the test on purpose. A test's namespace is deleted
// after the test, and until it is gone helm-controller may reconcile its
// releases again; a download from a server that was closed is retried
// with backoff for minutes, holding one of helm-controller's few workers,
// and four such releases once kept a later test's release from being
// reconciled at all for three minutes.
func serveChart(t testing.TB, name string) *meta.Artifact {
	t.Helper()
	tgz, err := packageChart(filepath.Join("testdata", "charts", name), name)
	if err != nil {
		t.Fatal(err)
	}
	file := name + "-" + chartVersion + ".tgz"
	url := charts.serve(file, tgz)
	sum := sha256.Sum256(tgz)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	size := int64(len(tgz))
	return &meta.Artifact{
		Path:           file,
		URL:            url,
		Revision:       chartVersion + "@" + digest,
		Digest:         digest,
		LastUpdateTime: metav1.Now(),
		Size:           &size,
	}
}

// charts is the run's one chart server.
var charts chartServer

// chartServer serves packaged charts by file name from its first use until
// the run ends (run closes it).
type chartServer struct {
	mu    sync.Mutex
	srv   *httptest.Server
	files map[string][]byte
}

// serve makes data available as file and returns its URL. Charts are
// packaged deterministically, so a file served twice has the same bytes.
func (c *chartServer) serve(file string, data []byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv == nil {
		c.files = map[string][]byte{}
		c.srv = httptest.NewServer(http.HandlerFunc(c.handle))
	}
	c.files[file] = data
	return c.srv.URL + "/" + file
}

func (c *chartServer) handle(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	data, ok := c.files[strings.TrimPrefix(r.URL.Path, "/")]
	c.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(data)
}

// close stops the server, if it was started.
func (c *chartServer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv != nil {
		c.srv.Close()
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
