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

// Package node runs a real Kubernetes node on this machine for credo's
// tests (issue 31): Debian's containerd and runc from a private
// configuration, the CNI bridge plugins on a private subnet, and kubelet and
// kube-scheduler built from source by `hack/build-control-plane.sh node`,
// registered with a tests/controlplane Environment. Images are built here
// and imported, never pulled.
package node

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/credo-dev/credo/internal/publish/image"
	"github.com/credo-dev/credo/tests/controlplane"
)

// PauseImage is the sandbox image containerd's CRI is configured with, as
// the CRI normalizes it: the name it must be imported under.
const PauseImage = "docker.io/credo/pause:1"

// NameAnnotation is the annotation containerd's importer reads an image's
// name from in an OCI layout's index.json.
const NameAnnotation = "io.containerd.image.name"

// BuildPause builds tests/node/pause statically and returns an image of it
// running as its entrypoint.
func BuildPause(ctx context.Context, dir string) (v1.Image, error) {
	return BuildImage(ctx, dir, "./tests/node/pause", "pause")
}

// BuildImage builds the main package pkg (relative to the repository root)
// statically into dir and returns an image of it as /name, its entrypoint.
func BuildImage(ctx context.Context, dir, pkg, name string) (v1.Image, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Dir = controlplane.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w: %s", pkg, err, out)
	}
	return BinaryImage(bin, name)
}

// BinaryImage returns a single-layer image holding the file at bin as
// /name, its entrypoint.
func BinaryImage(bin, name string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	created := time.Unix(0, 0).UTC()
	layer, err := image.Layer([]image.File{{Path: name, Mode: 0o755, Data: data}}, created)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH // built for this machine
	cfg.Config.Entrypoint = []string{"/" + name}
	cfg.Config.WorkingDir = "/"
	return mutate.ConfigFile(img, cfg)
}

// WriteLayoutTar writes an OCI image layout holding img, or the index idx
// when img is nil, annotated with name, as the tar `ctr images import`
// reads. dir is a scratch directory for the layout.
func WriteLayoutTar(dir, out, name string, img v1.Image, idx v1.ImageIndex) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	opt := layout.WithAnnotations(map[string]string{NameAnnotation: name})
	if img != nil {
		err = p.AppendImage(img, opt)
	} else {
		err = p.AppendIndex(idx, opt)
	}
	if err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	return tarDir(dir, out)
}

func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("tar %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
