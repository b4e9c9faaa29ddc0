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

package accessapi_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

// counter reads a credo counter from controller-runtime's registry, which
// the credential-controller serves on its metrics endpoint, and returns
// every label value gathered on the way.
func counter(g Gomega, name string, want map[string]string) (float64, []string) {
	return testenv.CounterValue(g, name, want), testenv.CredoLabelValues(g)
}

func TestMintsRevocationsAndRefusalsAreCountedWithoutSecretMaterial(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newAccount(t, ns, "db", "app", verifier.SCRAMSHA256, credv1.OwnerTenant)
	newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	c, _ := newMinter(t, ns)
	byNS := map[string]string{"namespace": ns}
	notFound := map[string]string{"namespace": ns, "operation": "mint", "reason": "NotFound"}
	notFoundBefore, _ := counter(g, "credo_access_refused_total", notFound)

	m, err := mint(ctx, c, ns, "db", "")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = mintAccount(ctx, c, ns, "db", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = revokeAccount(ctx, c, ns, "db")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = mint(ctx, c, ns, "ch", "")
	g.Expect(err).To(HaveOccurred())
	_, err = mint(ctx, c, ns, "nope", "")
	g.Expect(err).To(HaveOccurred())

	mints, _ := counter(g, "credo_access_mints_total", byNS)
	g.Expect(mints).To(Equal(2.0), "a mint through mints and one through accounts/db/mint")
	revocations, _ := counter(g, "credo_access_revocations_total", byNS)
	g.Expect(revocations).To(Equal(1.0))
	forbidden, _ := counter(g, "credo_access_refused_total",
		map[string]string{"namespace": ns, "operation": "mint", "reason": "Forbidden"})
	g.Expect(forbidden).To(Equal(1.0), "the platform account's mint is refused")
	notFoundAfter, seen := counter(g, "credo_access_refused_total", notFound)
	g.Expect(notFoundAfter-notFoundBefore).To(Equal(1.0), "the missing account's mint is refused")

	g.Expect(m.Status.Password).NotTo(BeEmpty())
	g.Expect(seen).NotTo(ContainElement(ContainSubstring(m.Status.Password)), "no password in any label")
	g.Expect(seen).NotTo(ContainElement("db"), "no account name in any label")
}
