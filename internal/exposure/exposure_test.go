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

package exposure

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Kubernetes' own components and the subjects named are trusted; the
// groups every user or every ServiceAccount is in, and a tenant's
// ServiceAccounts, never are.
func TestWhoIsTrusted(t *testing.T) {
	var trusted []rbacv1.Subject
	for _, s := range []string{"group:system:serviceaccounts:credo-system", "serviceaccount:mariadb-operator:mariadb-operator", "user:ops"} {
		sub, err := ParseSubject(s)
		if err != nil {
			t.Fatal(err)
		}
		trusted = append(trusted, sub)
	}
	c := New(nil, nil, trusted)
	for s, want := range map[string]bool{
		"serviceaccount:credo-system:credo-credential-controller": true,
		"user:system:serviceaccount:credo-system:credo-migrate":   true,
		"serviceaccount:mariadb-operator:mariadb-operator":        true,
		"serviceaccount:mariadb-operator:other":                   false,
		"serviceaccount:kube-system:namespace-controller":         true,
		"user:system:kube-controller-manager":                     true,
		"group:system:masters":                                    true,
		"user:ops":                                                true,
		"user:ada":                                                false,
		"serviceaccount:tenant-a:default":                         false,
		"user:system:serviceaccount:tenant-a:default":             false,
		"group:system:authenticated":                              false,
		"group:system:unauthenticated":                            false,
		"group:system:serviceaccounts":                            false,
		"group:system:serviceaccounts:tenant-a":                   false,
		"group:tenant-a-admins":                                   false,
	} {
		sub, err := ParseSubject(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.isTrusted(sub); got != want {
			t.Errorf("%s trusted: %v, want %v", s, got, want)
		}
	}
	for _, bad := range []string{"ada", "user:", "serviceaccount:ns", "role:x"} {
		if _, err := ParseSubject(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
