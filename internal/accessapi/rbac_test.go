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
	"os"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// shippedRolesFile holds the ClusterRoles of the access API, as deployed.
const shippedRolesFile = "../../config/apiservice/roles.yaml"

func readShippedRoles(t testing.TB) map[string]rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(shippedRolesFile)
	if err != nil {
		t.Fatalf("reading %s: %v", shippedRolesFile, err)
	}
	roles := map[string]rbacv1.ClusterRole{}
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		var r rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
			t.Fatalf("decoding a ClusterRole of %s: %v", shippedRolesFile, err)
		}
		roles[r.Name] = r
	}
	return roles
}

var installRoles sync.Once

// shippedRoles creates the ClusterRoles of config/apiservice/roles.yaml in
// the control plane, once, so that the tests bind the roles users get.
func shippedRoles(t testing.TB) {
	t.Helper()
	installRoles.Do(func() {
		for _, r := range readShippedRoles(t) {
			r.ResourceVersion = ""
			if err := platform.Create(context.Background(), &r); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("creating ClusterRole %s: %v", r.Name, err)
			}
		}
	})
}

// The shipped roles: mint and revoke apart, each with its subresource and
// its collection, aggregated to admin; reading accounts aggregated to view.
func TestShippedRolesGrantTheSubresources(t *testing.T) {
	g := NewWithT(t)
	roles := readShippedRoles(t)
	rule := func(group string, resources, verbs []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
	}
	const group = "access.credo.dev"
	g.Expect(roles).To(HaveLen(4))
	// get on accounts: kubectl credo reads the Secret's version to expect.
	readAccount := rule(group, []string{"accounts"}, []string{"get"})
	g.Expect(roles["credo-mint"].Rules).To(Equal([]rbacv1.PolicyRule{rule(group, []string{"mints", "accounts/mint"}, []string{"create"}), readAccount}))
	g.Expect(roles["credo-revoke"].Rules).To(Equal([]rbacv1.PolicyRule{rule(group, []string{"revocations", "accounts/revocation"}, []string{"create"}), readAccount}))
	g.Expect(roles["credo-access-view"].Rules).To(Equal([]rbacv1.PolicyRule{rule(group, []string{"accounts"}, []string{"get", "list"})}))
	g.Expect(roles["credo-join-token"].Rules).To(Equal([]rbacv1.PolicyRule{rule(group, []string{"jointokenrequests"}, []string{"create"})}))
	for _, name := range []string{"credo-mint", "credo-revoke", "credo-join-token"} {
		g.Expect(roles[name].Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-admin", "true"), name)
		g.Expect(roles[name].Labels).NotTo(HaveKey("rbac.authorization.k8s.io/aggregate-to-view"), name)
	}
	g.Expect(roles["credo-access-view"].Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-view", "true"))
}
