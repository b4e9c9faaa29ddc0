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

package security

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// newNamespace creates a tenant namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	NewWithT(t).Expect(env.Client.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// userClient returns a client authenticated as user with groups.
func userClient(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	c, err := env.UserClient(user, groups)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return c
}

// bind binds user, in ns, to the ClusterRole role (a built-in one such as
// view, or one credo ships).
func bind(t *testing.T, ns, user, role string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
}

// secretWriter is a user that may do anything with the Secrets of ns, as
// the built-in admin and edit roles may: the tenant of the admission tests,
// independent of role aggregation.
func secretWriter(t *testing.T, ns, user string) client.Client {
	t.Helper()
	grantSecrets(t, ns, user, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user})
	return userClient(t, user)
}

// operator is cert-manager's ServiceAccount, one of the identities the
// admission policy's default parameters name as publishers, allowed by
// RBAC to write the Secrets of ns.
func operator(t *testing.T, ns string) client.Client {
	t.Helper()
	user, groups := controlplane.ServiceAccountUser("cert-manager", "cert-manager")
	grantSecrets(t, ns, "cert-manager", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "cert-manager", Namespace: "cert-manager"})
	return userClient(t, user, groups...)
}

// grantSecrets binds subject, in ns, to a Role name granting every verb
// on Secrets.
func grantSecrets(t *testing.T, ns, name string, subject rbacv1.Subject) {
	t.Helper()
	NewWithT(t).Expect(env.GrantSecrets(context.Background(), ns, name, subject)).To(Succeed())
}

// newRelease creates a HelmRelease named name in ns.
func newRelease(t *testing.T, ns, name string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), testenv.HelmReleaseObject(ns, name, name, nil))).To(Succeed())
}

// testCA returns a fresh CA certificate (PEM, no key).
func testCA(t *testing.T, cn string) []byte {
	t.Helper()
	cert, _ := testpki.CA(t, cn)
	return cert
}

// publishedAnchor publishes a CA for a new release in ns, as cert-manager
// would, and waits until the trust-controller has projected it. It
// returns the CA certificate.
func publishedAnchor(t *testing.T, ns, release string) []byte {
	t.Helper()
	g := NewWithT(t)
	newRelease(t, ns, release)
	cert := testCA(t, release+"-ca")
	g.Expect(operator(t, ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-ca", Namespace: ns, Labels: keys.PublishLabels(release)},
		Data:       map[string][]byte{"ca.crt": cert},
	})).To(Succeed())
	g.Eventually(func() bool {
		var ta trustv1.TrustAnchor
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta); err != nil {
			return false
		}
		return conditions.IsTrue(&ta, meta.ReadyCondition)
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "the anchor of %s/%s becomes Ready", ns, release)
	return cert
}

// allowed asks kube-apiserver whether user may do verb on resource.
func allowed(t *testing.T, user, ns string, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	attrs.Namespace = ns
	return allowedAs(t, user, []string{"system:authenticated"}, attrs)
}

// allowedAs asks kube-apiserver whether user, in groups, may make the
// request attrs (its namespace included).
func allowedAs(t *testing.T, user string, groups []string, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	ok, err := env.Allowed(context.Background(), user, groups, attrs)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return ok
}
