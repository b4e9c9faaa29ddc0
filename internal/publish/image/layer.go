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

package image

import (
	"archive/tar"
	"bytes"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer: a regular file, or a directory when Data is
// nil and Dir is set.
type File struct {
	// Path inside the image, without the leading slash.
	Path string
	Mode int64
	// UID and GID own the entry.
	UID, GID int
	Dir      bool
	Data     []byte
}

// Layer returns a gzipped OCI layer holding files, the same bytes for the
// same files whatever the order they come in: entries sorted by path, every
// parent directory present, each entry dated modTime, no user or group
// names. The compression is done once, in memory.
func Layer(files []File, modTime time.Time) (v1.Layer, error) {
	entries := withParents(files)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range entries {
		h := &tar.Header{
			Name:    f.Path,
			Mode:    f.Mode,
			Uid:     f.UID,
			Gid:     f.GID,
			ModTime: modTime,
			Format:  tar.FormatPAX,
		}
		if f.Dir {
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// withParents returns files sorted by path with a directory entry (0755,
// root's) for every parent not given.
func withParents(files []File) []File {
	seen := map[string]bool{}
	var out []File
	for _, f := range files {
		f.Path = strings.TrimPrefix(path.Clean("/"+f.Path), "/")
		seen[f.Path] = true
		out = append(out, f)
	}
	for _, f := range files {
		for dir := path.Dir(strings.TrimPrefix(path.Clean("/"+f.Path), "/")); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if !seen[dir] {
				seen[dir] = true
				out = append(out, File{Path: dir, Mode: 0o755, Dir: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
