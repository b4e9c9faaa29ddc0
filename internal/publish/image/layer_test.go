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

package image_test

import (
	"archive/tar"
	"errors"
	"io"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"

	"github.com/credo-dev/credo/internal/publish/image"
)

var modTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestLayerIsTheSameWhateverTheOrderOfItsFiles(t *testing.T) {
	g := NewWithT(t)
	files := []image.File{
		{Path: "usr/bin/tool", Mode: 0o755, Data: []byte("tool")},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0::/:/sbin/nologin\n")},
		{Path: "home/nonroot", Mode: 0o700, Dir: true, UID: 65532, GID: 65532},
	}
	reversed := []image.File{files[2], files[1], files[0]}
	a, err := image.Layer(files, modTime)
	g.Expect(err).NotTo(HaveOccurred())
	b, err := image.Layer(reversed, modTime)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(digest(g, a)).To(Equal(digest(g, b)))

	other, err := image.Layer(files, modTime.Add(time.Second))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(digest(g, other)).NotTo(Equal(digest(g, a)), "the entries' time is part of the layer")
}

func TestLayerEntries(t *testing.T) {
	g := NewWithT(t)
	layer, err := image.Layer([]image.File{
		{Path: "/usr/bin/tool", Mode: 0o755, Data: []byte("tool")},
		{Path: "etc/ssl/certs/ca.crt", Mode: 0o644, Data: []byte("pem")},
		{Path: "home/nonroot", Mode: 0o700, Dir: true, UID: 65532, GID: 65532},
		{Path: "tmp", Mode: 0o1777, Dir: true},
	}, modTime)
	g.Expect(err).NotTo(HaveOccurred())

	type want struct {
		typ      byte
		mode     int64
		uid, gid int
		data     string
	}
	dir := want{typ: tar.TypeDir, mode: 0o755}
	wanted := map[string]want{
		"etc/":                 dir,
		"etc/ssl/":             dir,
		"etc/ssl/certs/":       dir,
		"etc/ssl/certs/ca.crt": {typ: tar.TypeReg, mode: 0o644, data: "pem"},
		"home/":                dir,
		"home/nonroot/":        {typ: tar.TypeDir, mode: 0o700, uid: 65532, gid: 65532},
		"tmp/":                 {typ: tar.TypeDir, mode: 0o1777},
		"usr/":                 dir,
		"usr/bin/":             dir,
		"usr/bin/tool":         {typ: tar.TypeReg, mode: 0o755, data: "tool"},
	}
	var names []string
	for h, data := range entries(g, layer) {
		names = append(names, h.Name)
		w, ok := wanted[h.Name]
		g.Expect(ok).To(BeTrue(), "unexpected entry %s", h.Name)
		g.Expect(h.Typeflag).To(Equal(w.typ), h.Name)
		g.Expect(h.Mode).To(Equal(w.mode), h.Name)
		g.Expect([]int{h.Uid, h.Gid}).To(Equal([]int{w.uid, w.gid}), h.Name)
		g.Expect(h.Uname+h.Gname).To(BeEmpty(), h.Name)
		g.Expect(h.ModTime.Equal(modTime)).To(BeTrue(), "%s is dated %s", h.Name, h.ModTime)
		g.Expect(string(data)).To(Equal(w.data), h.Name)
	}
	g.Expect(names).To(Equal([]string{
		"etc/", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca.crt",
		"home/", "home/nonroot/", "tmp/", "usr/", "usr/bin/", "usr/bin/tool",
	}), "sorted by path, every parent before its children")
}

func digest(g Gomega, l v1.Layer) v1.Hash {
	d, err := l.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	return d
}

// entries yields the layer's tar headers, in order, with their contents.
func entries(g Gomega, l v1.Layer) func(yield func(*tar.Header, []byte) bool) {
	return func(yield func(*tar.Header, []byte) bool) {
		rc, err := l.Uncompressed()
		g.Expect(err).NotTo(HaveOccurred())
		defer rc.Close()
		tarEntries(g, rc)(yield)
	}
}

func tarEntries(g Gomega, r io.Reader) func(yield func(*tar.Header, []byte) bool) {
	return func(yield func(*tar.Header, []byte) bool) {
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			data, err := io.ReadAll(tr)
			g.Expect(err).NotTo(HaveOccurred())
			if !yield(h, data) {
				return
			}
		}
	}
}
