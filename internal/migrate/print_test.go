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

package migrate

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

func TestPrint(t *testing.T) {
	res := &Result{
		Releases: []Release{
			{Namespace: "t", Name: "db", Steps: []Step{
				{Account: "db-app", Username: "app", Owner: credv1.OwnerTenant, Action: ActionMigrate, Reason: CarryOverReason},
				{Account: "db-root", Username: "root", Owner: credv1.OwnerPlatform, Action: ActionRotate, Reason: ExposedReason},
			}},
			{Namespace: "t", Name: "held", Skip: &Skip{Reason: SuspendedReason, Message: "HelmRelease t/held is suspended"}},
		},
		Listed: map[string]string{"t.held": "Suspended: HelmRelease t/held is suspended"},
	}
	t.Run("a dry run says that nothing was written and what would be listed", func(t *testing.T) {
		g := NewWithT(t)
		var out bytes.Buffer
		g.Expect(Print(&out, res, "credo-system/credo-migration")).To(Succeed())
		g.Expect(out.String()).To(And(
			MatchRegexp(`t\s+db\s+db-app\s+app\s+tenant\s+migrate\s+CarryOver`),
			MatchRegexp(`t\s+db\s+db-root\s+root\s+platform\s+rotate\s+Exposed`),
			MatchRegexp(`t\s+held\s+-\s+-\s+-\s+skip release\s+Suspended`),
			ContainSubstring("that would be listed in credo-system/credo-migration (1):\n  t.held: Suspended:"),
			ContainSubstring("Dry run: nothing was written")))
	})
	t.Run("an applied run says what is listed", func(t *testing.T) {
		g := NewWithT(t)
		applied := *res
		applied.Applied, applied.Listed = true, nil
		var out bytes.Buffer
		g.Expect(Print(&out, &applied, "credo-system/credo-migration")).To(Succeed())
		g.Expect(out.String()).To(And(ContainSubstring("No skipped releases listed in credo-system/credo-migration."),
			Not(ContainSubstring("Dry run"))))
	})
}

// TestSkippedErrorSaysWhatHappened: the last line of a run, which kubectl
// credo prints on stderr, tells a dry run from an applied one: a dry run
// lists nothing anywhere.
func TestSkippedErrorSaysWhatHappened(t *testing.T) {
	g := NewWithT(t)
	dry := &SkippedError{Listed: 4, Report: "credo-system/credo-migration", DryRun: true}
	g.Expect(dry.Error()).To(Equal("dry run: 4 release(s) would be skipped and listed in credo-system/credo-migration; nothing was written"))
	applied := &SkippedError{Listed: 2, Report: "credo-system/credo-migration"}
	g.Expect(applied.Error()).To(Equal("2 release(s) skipped and listed in credo-system/credo-migration"))
	g.Expect(dry.ExitCode()).To(Equal(ExitSkipped))
	g.Expect(applied.ExitCode()).To(Equal(ExitSkipped))
}
