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

// Package version is what a credo binary says about its build: the release
// it is, the commit it was built from and the Go that built it. Every binary
// prints it for --version, the controllers log it at start and serve it as
// the credo_build_info gauge (internal/manager). The package imports the
// standard library only: credo-agent, a host binary, links no Prometheus
// client for it.
//
// The release is stamped at link time, as `make build` does:
//
//	go build -ldflags "-X github.com/credo-dev/credo/internal/version.version=v0.1.0" ./cmd/...
//
// A binary built without it says "devel". The commit is the one stamped
// with -X github.com/credo-dev/credo/internal/version.commit=<sha>[-dirty],
// as `make build` does too, else the one the go command records when it
// builds from a git checkout (vcs.revision, with "-dirty" when the tree had
// changes), else "unknown" (a build outside a checkout or in a linked git
// worktree, -buildvcs=false, go run, a test binary).
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release, set at link time with
// -X github.com/credo-dev/credo/internal/version.version=<release>.
var version = "devel"

// commit is the commit, set at link time with
// -X github.com/credo-dev/credo/internal/version.commit=<sha>[-dirty]
// where the go command records none: in a linked git worktree
// (golang/go#58218), with -buildvcs=false, or in an image built from a
// copy of the sources. Empty leaves it to the go command's record.
var commit = ""

// Unknown is the Commit of a binary built without version control
// information.
const Unknown = "unknown"

// Info is a binary's build.
type Info struct {
	// Version is the release stamped at link time, "devel" without one.
	Version string
	// Commit is the full git commit the binary was built from, suffixed
	// "-dirty" when the tree had uncommitted changes; Unknown when neither
	// the link nor the go command recorded one.
	Commit string
	// GoVersion is the Go release that built the binary (go1.26.8).
	GoVersion string
}

// Get returns the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return Info{Version: version, Commit: commitOf(commit, bi), GoVersion: runtime.Version()}
}

// String is the build on one line, the same for every binary:
//
//	v0.1.0 (commit 0123456789abcdef0123456789abcdef01234567, go1.26.8)
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, i.Commit, i.GoVersion)
}

// Line is what --version prints: the binary's name, then the build.
//
//	trust-controller v0.1.0 (commit 0123456789abcdef0123456789abcdef01234567, go1.26.8)
func (i Info) Line(binary string) string { return binary + " " + i.String() }

// Print writes the running binary's Line to w, with a newline: what
// every binary's --version prints to stdout.
func Print(w io.Writer, binary string) error {
	_, err := fmt.Fprintln(w, Get().Line(binary))
	return err
}

// commitOf returns stamped when it is not empty, else the commit the go
// command recorded in bi, with "-dirty" when the tree was modified; Unknown
// when bi is nil or has none.
func commitOf(stamped string, bi *debug.BuildInfo) string {
	switch {
	case stamped != "":
		return stamped
	case bi == nil:
		return Unknown
	}
	var revision string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case revision == "":
		return Unknown
	case modified:
		return revision + "-dirty"
	}
	return revision
}
