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

package credentials

import (
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// An engine's own name of a format is refused with the built-in name to
// use, and the built-in formats listed once.
func TestUnknownFormatSuggestsTheBuiltInName(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "db", "mariadb", nil)
	newAccount(t, ns, "db-app", "db", "app", "mysql_native_password")

	a := accountWith(g, ns, "db-app", accountReason(credv1.FormatRefusedCondition, credv1.UnknownFormatReason))
	msg := conditions.GetMessage(a, meta.ReadyCondition)
	g.Expect(msg).To(Equal(`unknown format "mysql_native_password" (did you mean "mysql-native"?); ` +
		`the built-in formats are mysql-native, plaintext, scram-sha-256, sha256-hex`))
	g.Expect(strings.Count(msg, "built-in formats")).To(Equal(1), "the formats are listed once")
	_, list, _ := strings.Cut(msg, "the built-in formats are ")
	for _, n := range verifier.Names() {
		g.Expect(strings.Count(list, n)).To(Equal(1), n)
	}
	g.Expect(conditions.IsStalled(a)).To(BeTrue())
}
