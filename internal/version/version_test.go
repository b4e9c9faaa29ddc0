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

package version

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"

	. "github.com/onsi/gomega"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestCommitComesFromTheVCSSettings(t *testing.T) {
	clean := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: sha}, {Key: "vcs.modified", Value: "false"},
	}}
	for _, tc := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"no build information is unknown", "", nil, Unknown},
		{"a build without version control is unknown", "", &debug.BuildInfo{}, Unknown},
		{"a clean tree gives the revision", "", clean, sha},
		{"a modified tree gives the revision suffixed -dirty", "", &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: sha},
		}}, sha + "-dirty"},
		{"a modified flag without a revision is still unknown", "", &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.modified", Value: "true"},
		}}, Unknown},
		{"a stamped commit stands where the go command recorded none", sha + "-dirty", &debug.BuildInfo{}, sha + "-dirty"},
		{"a stamped commit stands without build information", sha, nil, sha},
		{"a stamped commit wins over the go command's", "fedcba9876543210fedcba9876543210fedcba98", clean,
			"fedcba9876543210fedcba9876543210fedcba98"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(commitOf(tc.stamped, tc.bi)).To(Equal(tc.want))
		})
	}
}

func TestGetIsTheLinkedVersionAndTheRunningGo(t *testing.T) {
	g := NewWithT(t)
	i := Get()
	g.Expect(i.Version).To(Equal("devel"), "a test binary is linked without -X")
	g.Expect(i.GoVersion).To(Equal(runtime.Version()))
	g.Expect(i.Commit).To(Or(Equal(Unknown), MatchRegexp(`^[0-9a-f]{40}(-dirty)?$`)))
}

func TestTheLineNamesTheBinaryVersionCommitAndGo(t *testing.T) {
	g := NewWithT(t)
	i := Info{Version: "v0.1.0", Commit: sha, GoVersion: "go1.26.8"}
	g.Expect(i.Line("trust-controller")).To(Equal("trust-controller v0.1.0 (commit " + sha + ", go1.26.8)"))

	var out bytes.Buffer
	g.Expect(Print(&out, "credo-agent")).To(Succeed())
	g.Expect(out.String()).To(Equal("credo-agent "+Get().String()+"\n"), "one line")
}
