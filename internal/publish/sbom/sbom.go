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

// Package sbom writes the SPDX 2.3 software bill of materials of an image:
// every Go module each binary embeds, read from the binary's own build
// information, and the other packages the image carries.
package sbom

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// Package is a package the image carries that is not a Go module, such as
// the distribution's CA certificates.
type Package struct {
	Name, Version string
	// PURL is its package URL (pkg:deb/debian/ca-certificates@…).
	PURL string
}

// Options describe the image the document is about.
type Options struct {
	// Name is the image's repository, Version its release.
	Name, Version string
	// Namespace is the document's unique URI.
	Namespace string
	// Created is when the document was made: the commit's time, so that a
	// rebuild gives the same bytes.
	Created time.Time
	// BinaryDir holds the binaries; each is read with debug/buildinfo.
	BinaryDir string
	// Others are the image's other packages.
	Others []Package
}

// Generate returns the SPDX JSON document.
func Generate(o Options) ([]byte, error) {
	entries, err := os.ReadDir(o.BinaryDir)
	if err != nil {
		return nil, err
	}
	image := &spdx.Package{
		PackageName:             o.Name,
		PackageSPDXIdentifier:   "Image",
		PackageVersion:          o.Version,
		PackageDownloadLocation: "NOASSERTION",
		PrimaryPackagePurpose:   "CONTAINER",
	}
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      o.Name + "@" + o.Version,
		DocumentNamespace: o.Namespace,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "credo-release"}},
			Created:  o.Created.UTC().Format(time.RFC3339),
		},
		Packages:      []*spdx.Package{image},
		Relationships: []*spdx.Relationship{relate("DOCUMENT", "DESCRIBES", "Image")},
	}
	modules := map[string]*spdx.Package{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := buildinfo.ReadFile(filepath.Join(o.BinaryDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		bin := binaryPackage(e.Name(), o.Version, info)
		doc.Packages = append(doc.Packages, bin)
		doc.Relationships = append(doc.Relationships, relate("Image", "CONTAINS", bin.PackageSPDXIdentifier))
		deps := append([]Package{{Name: "stdlib", Version: info.GoVersion, PURL: "pkg:golang/stdlib@" + info.GoVersion}}, modulesOf(info)...)
		for _, m := range deps {
			p := modules[m.PURL]
			if p == nil {
				p = otherPackage(m)
				modules[m.PURL] = p
			}
			doc.Relationships = append(doc.Relationships, relate(bin.PackageSPDXIdentifier, "DEPENDS_ON", p.PackageSPDXIdentifier))
		}
	}
	for _, o := range o.Others {
		p := otherPackage(o)
		modules[o.PURL] = p
		doc.Relationships = append(doc.Relationships, relate("Image", "CONTAINS", p.PackageSPDXIdentifier))
	}
	purls := make([]string, 0, len(modules))
	for purl := range modules {
		purls = append(purls, purl)
	}
	sort.Strings(purls)
	for _, purl := range purls {
		doc.Packages = append(doc.Packages, modules[purl])
	}
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  ")); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func binaryPackage(name, version string, info *buildinfo.BuildInfo) *spdx.Package {
	p := &spdx.Package{
		PackageName:             name,
		PackageSPDXIdentifier:   common.ElementID("Binary-" + name),
		PackageVersion:          version,
		PackageDownloadLocation: "NOASSERTION",
		PrimaryPackagePurpose:   "APPLICATION",
		PackageComment:          "Go package " + info.Path + ", built with " + info.GoVersion,
	}
	if info.Main.Path != "" {
		p.PackageExternalReferences = []*spdx.PackageExternalReference{purlRef("pkg:golang/" + info.Main.Path + "@" + version)}
	}
	return p
}

// modulesOf lists the modules a binary embeds, each at the version it was
// built with (a replaced module at its replacement).
func modulesOf(info *buildinfo.BuildInfo) []Package {
	var out []Package
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		out = append(out, Package{Name: d.Path, Version: d.Version, PURL: "pkg:golang/" + d.Path + "@" + d.Version})
	}
	return out
}

func otherPackage(o Package) *spdx.Package {
	return &spdx.Package{
		PackageName:               o.Name,
		PackageSPDXIdentifier:     elementID(o.PURL),
		PackageVersion:            o.Version,
		PackageDownloadLocation:   "NOASSERTION",
		PackageExternalReferences: []*spdx.PackageExternalReference{purlRef(o.PURL)},
	}
}

func purlRef(purl string) *spdx.PackageExternalReference {
	return &spdx.PackageExternalReference{Category: "PACKAGE-MANAGER", RefType: "purl", Locator: purl}
}

func relate(a common.ElementID, rel string, b common.ElementID) *spdx.Relationship {
	return &spdx.Relationship{
		RefA:         common.DocElementID{ElementRefID: a},
		RefB:         common.DocElementID{ElementRefID: b},
		Relationship: rel,
	}
}

// elementID makes an SPDX identifier (letters, digits, '.' and '-') of a
// package URL, readable and, by a hash of the URL, unique.
func elementID(purl string) common.ElementID {
	sum := sha256.Sum256([]byte(purl))
	return common.ElementID("Package-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '-'
	}, strings.TrimPrefix(purl, "pkg:")) + "-" + hex.EncodeToString(sum[:4]))
}
