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

package sbom_test

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	spdx "github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/credo-dev/credo/internal/publish/sbom"
)

// binaryDir holds a real Go binary, testdata/tiny built as
// trust-controller, and its build information.
func binaryDir(t *testing.T) (string, *buildinfo.BuildInfo) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "trust-controller")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, "./testdata/tiny")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return dir, info
}

func options(dir string) sbom.Options {
	return sbom.Options{
		Name: "ghcr.io/credo-dev/credo", Version: "v0.1.0",
		Namespace: "https://github.com/credo-dev/credo/releases/v0.1.0/sbom/linux-amd64",
		Created:   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		BinaryDir: dir,
		Others: []sbom.Package{{Name: "ca-certificates", Version: "20250419",
			PURL: "pkg:deb/debian/ca-certificates@20250419?arch=all"}},
	}
}

func TestGenerateDescribesTheImagesBinariesAndModules(t *testing.T) {
	g := NewWithT(t)
	dir, info := binaryDir(t)
	raw, err := sbom.Generate(options(dir))
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := spdxjson.Read(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc.SPDXVersion).To(Equal("SPDX-2.3"))
	g.Expect(doc.DocumentNamespace).To(Equal(options(dir).Namespace))
	g.Expect(doc.CreationInfo.Created).To(Equal("2026-01-02T03:04:05Z"))

	byID := map[common.ElementID]*spdx.Package{}
	purls := map[string]common.ElementID{}
	for _, p := range doc.Packages {
		g.Expect(byID).NotTo(HaveKey(p.PackageSPDXIdentifier), "element IDs are unique")
		byID[p.PackageSPDXIdentifier] = p
		for _, ref := range p.PackageExternalReferences {
			if ref.RefType == "purl" {
				purls[ref.Locator] = p.PackageSPDXIdentifier
			}
		}
	}
	related := map[[3]string]bool{}
	for _, r := range doc.Relationships {
		for _, id := range []common.ElementID{r.RefA.ElementRefID, r.RefB.ElementRefID} {
			if id != "DOCUMENT" {
				g.Expect(byID).To(HaveKey(id), "%s %s %s names a package of the document", r.RefA, r.Relationship, r.RefB)
			}
		}
		related[[3]string{string(r.RefA.ElementRefID), r.Relationship, string(r.RefB.ElementRefID)}] = true
	}
	relates := func(a common.ElementID, rel string, b common.ElementID) bool {
		return related[[3]string{string(a), rel, string(b)}]
	}

	var imageID, binaryID common.ElementID
	for id, p := range byID {
		switch {
		case p.PrimaryPackagePurpose == "CONTAINER":
			imageID = id
			g.Expect(p.PackageName).To(Equal("ghcr.io/credo-dev/credo"))
			g.Expect(p.PackageVersion).To(Equal("v0.1.0"))
		case p.PackageName == "trust-controller":
			binaryID = id
			g.Expect(p.PrimaryPackagePurpose).To(Equal("APPLICATION"))
		}
	}
	g.Expect(imageID).NotTo(BeEmpty(), "the image is a package")
	g.Expect(binaryID).NotTo(BeEmpty(), "the binary is a package")
	g.Expect(relates("DOCUMENT", "DESCRIBES", imageID)).To(BeTrue())
	g.Expect(relates(imageID, "CONTAINS", binaryID)).To(BeTrue())

	// The binary's modules, the standard library among them, as its build
	// information lists them.
	g.Expect(info.Deps).NotTo(BeEmpty())
	var xmod string
	for _, d := range info.Deps {
		if d.Path == "golang.org/x/mod" {
			xmod = "pkg:golang/golang.org/x/mod@" + d.Version
		}
		if d.Replace != nil {
			d = d.Replace
		}
		purl := "pkg:golang/" + d.Path + "@" + d.Version
		g.Expect(purls).To(HaveKey(purl))
		g.Expect(relates(binaryID, "DEPENDS_ON", purls[purl])).To(BeTrue(), "trust-controller depends on %s", purl)
	}
	g.Expect(xmod).To(MatchRegexp(`^pkg:golang/golang.org/x/mod@v\d+\.\d+\.\d+`), "the binary embeds golang.org/x/mod")
	g.Expect(byID[purls[xmod]].PackageName).To(Equal("golang.org/x/mod"))
	stdlib := "pkg:golang/stdlib@" + info.GoVersion
	g.Expect(purls).To(HaveKey(stdlib))
	g.Expect(relates(binaryID, "DEPENDS_ON", purls[stdlib])).To(BeTrue())

	ca := "pkg:deb/debian/ca-certificates@20250419?arch=all"
	g.Expect(purls).To(HaveKey(ca))
	g.Expect(byID[purls[ca]].PackageName).To(Equal("ca-certificates"))
	g.Expect(relates(imageID, "CONTAINS", purls[ca])).To(BeTrue())
}

func TestGenerateIsReproducible(t *testing.T) {
	g := NewWithT(t)
	dir, _ := binaryDir(t)
	first, err := sbom.Generate(options(dir))
	g.Expect(err).NotTo(HaveOccurred())
	second, err := sbom.Generate(options(dir))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(second)).To(Equal(string(first)))
}

func TestGenerateRefusesAFileThatIsNotAGoBinary(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "script.sh"), []byte("#!/bin/sh\n"), 0o600)).To(Succeed())
	_, err := sbom.Generate(options(dir))
	g.Expect(err).To(MatchError(ContainSubstring("script.sh")))
}
