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

package v1alpha1

import (
	"strings"
	"testing"
)

func TestAccountSecretNameMapsUsernamesToDNS(t *testing.T) {
	for _, tc := range []struct{ username, want string }{
		{"app", "pg.app.account"},
		{"App_User@example.com", "pg.app-user-example-com.account"},
		{"--", "pg.user.account"},
	} {
		if got := AccountSecretName("pg", tc.username); got != tc.want {
			t.Errorf("AccountSecretName(pg, %q) = %q, want %q", tc.username, got, tc.want)
		}
	}
	if AccountSecretName("pg", "App_User") != AccountSecretName("pg", "app.user") {
		t.Error("App_User and app.user must map to one name: a collision the controller detects")
	}
	long := AccountSecretName("pg", strings.Repeat("a", 300))
	if len(long) > 253 || !strings.HasSuffix(long, ".account") {
		t.Errorf("a long username's Secret name %q must fit 253 characters and end in .account", long)
	}
	if long == AccountSecretName("pg", strings.Repeat("a", 299)) {
		t.Error("two long usernames must keep distinct names")
	}
	acct := &CredentialAccount{Spec: CredentialAccountSpec{Release: "pg", Username: "app"}}
	if acct.SecretName() != "pg.app.account" {
		t.Errorf("CredentialAccount.SecretName() = %q", acct.SecretName())
	}
}
