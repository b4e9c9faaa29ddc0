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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"helm.sh/helm/v4/pkg/chart/loader"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// PackageOptions are what a release sets in the chart it packages.
type PackageOptions struct {
	// Version is the chart's version (SemVer 2), Chart.yaml's version.
	Version string
	// AppVersion is Chart.yaml's appVersion, the image tag by default;
	// empty: as generated.
	AppVersion string
	// ImageRepository and ImageDigest (sha256:...) are values.yaml's
	// image.repository and image.digest; empty: as generated.
	ImageRepository, ImageDigest string
	// ModTime is every entry's modification time; zero: the Unix epoch.
	ModTime time.Time
}

// Package returns the chart in chartDir as a chart archive (.tgz) with o
// applied: its files under credo/, sorted, owned by 0:0, mode 0644, dated
// o.ModTime, gzipped without a name or time, so that the same chart and
// options give the same bytes. It loads the archive with Helm's loader
// before returning it.
func Package(chartDir string, o PackageOptions) ([]byte, error) {
	if o.Version == "" {
		return nil, fmt.Errorf("packaging %s: no version", chartDir)
	}
	modTime := time.Unix(0, 0)
	if !o.ModTime.IsZero() {
		modTime = o.ModTime.UTC().Truncate(time.Second)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(chartDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(chartDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if data, err = applyOptions(rel, data, o); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg,
			Name:     Name + "/" + rel,
			Mode:     0o644,
			Size:     int64(len(data)),
			ModTime:  modTime,
		}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("packaging %s: %w", chartDir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := checkPackage(buf.Bytes(), o); err != nil {
		return nil, fmt.Errorf("packaging %s: %w", chartDir, err)
	}
	return buf.Bytes(), nil
}

// Chart.yaml's and values.yaml's lines that Package sets.
var (
	versionLine    = regexp.MustCompile(`(?m)^version: .*$`)
	appVersionLine = regexp.MustCompile(`(?m)^appVersion: .*$`)
	repositoryLine = regexp.MustCompile(`(?m)^(image:\n(?:  .*\n|\s*#.*\n)*?  repository: ).*$`)
	digestLine     = regexp.MustCompile(`(?m)^(image:\n(?:  .*\n|\s*#.*\n)*?  digest: ).*$`)
)

// applyOptions sets o's version, appVersion and image in Chart.yaml and
// values.yaml, each line once.
func applyOptions(rel string, data []byte, o PackageOptions) ([]byte, error) {
	type set struct {
		re    *regexp.Regexp
		value string
		field string
	}
	var sets []set
	switch rel {
	case "Chart.yaml":
		sets = []set{{versionLine, "version: " + quote(o.Version), "version"}}
		if o.AppVersion != "" {
			sets = append(sets, set{appVersionLine, "appVersion: " + quote(o.AppVersion), "appVersion"})
		}
	case "values.yaml":
		if o.ImageRepository != "" {
			sets = append(sets, set{repositoryLine, "${1}" + quote(o.ImageRepository), "image.repository"})
		}
		if o.ImageDigest != "" {
			sets = append(sets, set{digestLine, "${1}" + quote(o.ImageDigest), "image.digest"})
		}
	}
	for _, s := range sets {
		if n := len(s.re.FindAllIndex(data, -1)); n != 1 {
			return nil, fmt.Errorf("%s: %d lines of %s, want 1", rel, n, s.field)
		}
		data = s.re.ReplaceAll(data, []byte(s.value))
	}
	return data, nil
}

// quote is s as a YAML (JSON) string.
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// checkPackage loads a packaged chart as Helm does and checks it carries o.
func checkPackage(tgz []byte, o PackageOptions) error {
	c, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("helm cannot load it: %w", err)
	}
	ch, ok := c.(*chartv2.Chart)
	if !ok {
		return fmt.Errorf("helm loads it as a %T, want a v2 chart", c)
	}
	if ch.Metadata.Version != o.Version || (o.AppVersion != "" && ch.Metadata.AppVersion != o.AppVersion) {
		return fmt.Errorf("it has version %s, appVersion %s", ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	image, _ := ch.Values["image"].(map[string]any)
	if (o.ImageRepository != "" && image["repository"] != o.ImageRepository) || (o.ImageDigest != "" && image["digest"] != o.ImageDigest) {
		return fmt.Errorf("its values have image %v", image)
	}
	return nil
}
