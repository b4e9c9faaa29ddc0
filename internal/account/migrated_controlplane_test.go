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

package account

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

func TestMigratedPasswordsOnTheAPIServer(t *testing.T) {
	c := startControlPlane(t)
	t.Run("a migrated tenant password is previously exposed until a mint or a revocation replaces it", func(t *testing.T) {
		for _, origin := range []credv1.Origin{credv1.OriginMinted, credv1.OriginRevoked} {
			g := NewWithT(t)
			ctx := context.Background()
			w, acct := namespaced(t, c, credv1.OwnerTenant)
			cur := created(t, g, w, acct)
			f, err := verifier.Lookup(acct.Spec.Format.Name)
			g.Expect(err).NotTo(HaveOccurred())

			migrated, err := w.StoreMigrated(ctx, acct, cur, f, "the chart's password", "credo-migrate")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(verifier.Matches(f, acct.Spec.Username, "the chart's password", string(migrated.Data[credv1.PasswordKey]))).To(BeTrue(),
				"the verifier of the carried-over password is stored (values not printed)")
			g.Expect(migrated.Annotations).To(And(
				HaveKeyWithValue(testKeys.Origin, string(credv1.OriginMigrated)),
				HaveKey(testKeys.PreviouslyExposed())))
			g.Expect(ParseHistory(migrated.Annotations[testKeys.History])).To(ContainElement(
				HaveField("By", "credo-migrate")))

			_, after := newPassword(g, w, acct, migrated, Record{Origin: origin, By: "jane"})
			g.Expect(after.Annotations).NotTo(HaveKey(testKeys.PreviouslyExposed()), "%s clears the mark", origin)
			g.Expect(after.Annotations).NotTo(HaveKey(testKeys.MigratedRotation()))
		}
	})

	t.Run("a platform password is never carried over, and a rotation by the migration is recorded", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		w, acct := namespaced(t, c, credv1.OwnerPlatform)
		cur := created(t, g, w, acct)
		f, err := verifier.Lookup(acct.Spec.Format.Name)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = w.StoreMigrated(ctx, acct, cur, f, "the chart's password", "credo-migrate")
		g.Expect(err).To(HaveOccurred())

		_, rotated := newPassword(g, w, acct, cur, Record{Origin: credv1.OriginGenerated, By: "credo-migrate", MigratedRotation: true})
		g.Expect(rotated.Annotations).To(HaveKey(testKeys.MigratedRotation()))
		g.Expect(rotated.Annotations).NotTo(HaveKey(testKeys.PreviouslyExposed()))
		_, again := newPassword(g, w, acct, rotated, Record{Origin: credv1.OriginGenerated, By: "credo"})
		g.Expect(again.Annotations).To(HaveKey(testKeys.MigratedRotation()), "the controller's later writes keep the record")
	})
}
