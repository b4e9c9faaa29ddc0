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
	"testing"

	. "github.com/onsi/gomega"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

func TestAccountCollisionEventNamesTheAccountAndItsSecret(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "shop", "mariadb", nil)
	newAccount(t, ns, "first", "shop", "Shop_User", "mysql-native")
	newAccount(t, ns, "second", "shop", "shop.user", "mysql-native")

	e := env.WarningEvent(g, ns, credv1.CredentialAccountKind, "second", credv1.AccountCollisionReason)
	g.Expect(e.Annotations).To(And(
		HaveKeyWithValue(credv1.EventReleaseKey, "shop"),
		HaveKeyWithValue(credv1.EventUsernameKey, "shop.user"),
		HaveKeyWithValue(credv1.EventSecretKey, "shop.shop-user"+credv1.AccountSecretSuffix),
		HaveKeyWithValue(credv1.EventOwnerKey, string(credv1.OwnerTenant)),
	))
}
