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
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/loader"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

func TestPackageIsDeterministicAndLoadable(t *testing.T) {
	g := NewWithT(t)
	o := PackageOptions{
		Version: "0.1.0", AppVersion: "v0.1.0",
		ImageRepository: "ghcr.io/credo-dev/credo",
		ImageDigest:     "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		ModTime:         time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	first, err := Package(chartDir, o)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := Package(chartDir, o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Equal(first, second)).To(BeTrue(), "the same chart and options give the same bytes")

	c, err := loader.LoadArchive(bytes.NewReader(first))
	g.Expect(err).NotTo(HaveOccurred())
	ch := c.(*chartv2.Chart)
	g.Expect(ch.Metadata.Name).To(Equal(Name))
	g.Expect(ch.Metadata.Version).To(Equal("0.1.0"))
	g.Expect(ch.Metadata.AppVersion).To(Equal("v0.1.0"))
	g.Expect(ch.Values["image"]).To(HaveKeyWithValue("digest", o.ImageDigest))
	g.Expect(ch.Templates).NotTo(BeEmpty())

	// The archive's entries: sorted, under credo/, 0644, owned by 0:0, dated.
	zr, err := gzip.NewReader(bytes.NewReader(first))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(zr.ModTime.IsZero()).To(BeTrue())
	g.Expect(zr.Name).To(BeEmpty())
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(h.Name).To(HavePrefix(Name + "/"))
		g.Expect(h.Mode).To(BeEquivalentTo(0o644))
		g.Expect(h.Uid).To(BeZero())
		g.Expect(h.Gid).To(BeZero())
		g.Expect(h.ModTime.Equal(o.ModTime)).To(BeTrue())
		names = append(names, h.Name)
	}
	g.Expect(len(names)).To(BeNumerically(">", 10))
	g.Expect(names).To(Equal(sortedCopy(names)))

	// Another version, other bytes; no version, no archive.
	other, err := Package(chartDir, PackageOptions{Version: "0.1.1", ModTime: o.ModTime})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Equal(first, other)).To(BeFalse())
	_, err = Package(chartDir, PackageOptions{})
	g.Expect(err).To(HaveOccurred())
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
