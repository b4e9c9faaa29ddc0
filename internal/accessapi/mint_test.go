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
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
)

func TestMintThroughKubeAPIServer(t *testing.T) {
	for _, format := range []string{verifier.SCRAMSHA256, verifier.SHA256Hex} {
		t.Run(format, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := newNamespace(t)
			before := newAccount(t, ns, "db", "app", format, credv1.OwnerTenant)
			c, user := newMinter(t, ns)

			m, err := mint(ctx, c, ns, "db", "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(m.Status.Password)).To(BeNumerically(">=", 32))
			g.Expect(m.Status.Username).To(Equal("app"))
			g.Expect(m.Status.SecretName).To(Equal(before.Name))
			g.Expect(m.Status.MintedAt.IsZero()).To(BeFalse())

			s := secretOf(g, ns, before.Name)
			g.Expect(s.ResourceVersion).To(Equal(m.Status.ResourceVersion))
			g.Expect(matches(format, string(s.Data["password"]), m.Status.Password)).To(BeTrue(),
				"the stored verifier is the verifier of the returned password (values not printed)")
			g.Expect(s.Annotations[keys.Origin]).To(Equal(string(credv1.OriginMinted)))
			h := account.ParseHistory(s.Annotations[keys.History])
			g.Expect(h).NotTo(BeEmpty())
			g.Expect(h[len(h)-1].By).To(Equal(user))
			g.Expect(h[len(h)-1].Operation).To(Equal(credv1.OriginMinted))
		})
	}
}

func TestRevocationReplacesThePassword(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SCRAMSHA256, credv1.OwnerTenant)
	c, user := newMinter(t, ns)
	m, err := mint(ctx, c, ns, "db", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(matches(verifier.SCRAMSHA256, string(secretOf(g, ns, s.Name).Data["password"]), m.Status.Password)).To(BeTrue())

	r := &accessv1.Revocation{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "db-", Namespace: ns},
		Spec:       accessv1.AccountRequestSpec{Account: "db"},
	}
	g.Expect(c.Create(ctx, r)).To(Succeed())
	g.Expect(r.Status.SecretName).To(Equal(s.Name))
	g.Expect(r.Status.RevokedAt.IsZero()).To(BeFalse())

	after := secretOf(g, ns, s.Name)
	g.Expect(after.ResourceVersion).To(Equal(r.Status.ResourceVersion))
	g.Expect(after.Annotations[keys.Origin]).To(Equal(string(credv1.OriginRevoked)))
	g.Expect(matches(verifier.SCRAMSHA256, string(after.Data["password"]), m.Status.Password)).To(BeFalse(),
		"the minted password no longer matches after the revocation")
	h := account.ParseHistory(after.Annotations[keys.History])
	g.Expect(h[len(h)-1].Operation).To(Equal(credv1.OriginRevoked))
	g.Expect(h[len(h)-1].By).To(Equal(user))
}

func TestPlatformAccountIsRefusedAndMissingAccountIsNotFound(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	c, _ := newMinter(t, ns)

	_, err := mint(ctx, c, ns, "ch", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("owned by the platform"))
	g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(s.ResourceVersion), "nothing was written")

	_, err = mint(ctx, c, ns, "nope", "")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}

func TestUnauthorizedUsersCannotMint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)

	// No binding at all.
	stranger := userClient(t, "stranger-"+rand.String(6))
	_, err := mint(ctx, stranger, ns, "db", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)

	// The built-in view ClusterRole, and a Role reading CredentialAccounts.
	viewer := "viewer-" + rand.String(6)
	bindRole(t, ns, viewer, "ClusterRole", "view")
	grant(t, ns, viewer, credv1.GroupVersion.Group, []string{"credentialaccounts"}, []string{"get", "list", "watch"})
	vc := userClient(t, viewer)
	g.Eventually(func() error {
		return vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &credv1.CredentialAccount{})
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed(), "the viewer's RBAC is in effect")
	_, err = mint(ctx, vc, ns, "db", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a view user cannot mint: %v", err)
	_, err = revoke(ctx, vc, ns, "db")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a view user cannot revoke: %v", err)

	// A minter cannot read the account Secret.
	mc, _ := newMinter(t, ns)
	err = mc.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, &corev1.Secret{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(s.ResourceVersion), "nothing was written")
}

func TestDryRunIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	c, _ := newMinter(t, ns)
	m := &accessv1.Mint{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "db-", Namespace: ns},
		Spec:       accessv1.AccountRequestSpec{Account: "db"},
	}
	err := c.Create(ctx, m, client.DryRunAll)
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("dry run is not supported"))
	g.Expect(m.Status.Password).To(BeEmpty())
	g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(s.ResourceVersion), "nothing was written")
}

func revoke(ctx context.Context, c client.Client, ns, acct string) (*accessv1.Revocation, error) {
	r := &accessv1.Revocation{
		ObjectMeta: metav1.ObjectMeta{GenerateName: acct + "-", Namespace: ns},
		Spec:       accessv1.AccountRequestSpec{Account: acct},
	}
	return r, c.Create(ctx, r)
}

// An account declared before its release has its Secret at once, owned by
// the account and awaiting the release, holding a password nobody knows:
// no mint or revocation writes it until the release exists (which
// AccountSources reserve its name is unknown until then); then a mint
// goes through.
func TestAMintWaitsForTheAccountsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	acct := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: credv1.Format{Name: verifier.SCRAMSHA256}},
	}
	g.Expect(platform.Create(ctx, acct)).To(Succeed())
	name := credv1.AccountSecretName("db", "app")
	var s corev1.Secret
	g.Eventually(func() map[string]string {
		_ = platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)
		return s.Annotations
	}, 30*time.Second, 100*time.Millisecond).Should(HaveKeyWithValue(keys.AwaitingRelease(), "db"), "the Secret awaits the release")
	c, _ := newMinter(t, ns)

	_, err := mint(ctx, c, ns, "db", "")
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("awaits HelmRelease db, which does not exist yet"))
	err = c.Create(ctx, &accessv1.Revocation{ObjectMeta: metav1.ObjectMeta{GenerateName: "db-", Namespace: ns},
		Spec: accessv1.AccountRequestSpec{Account: "db"}})
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(secretOf(g, ns, name).ResourceVersion).To(Equal(s.ResourceVersion), "nothing was written")

	env.NewHelmRelease(t, ns, "db", "postgres", nil)
	g.Eventually(func() map[string]string { return secretOf(g, ns, name).Annotations }, 30*time.Second, 100*time.Millisecond).
		ShouldNot(HaveKey(keys.AwaitingRelease()), "the release took the Secret over")
	m, err := mint(ctx, c, ns, "db", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(matches(verifier.SCRAMSHA256, string(secretOf(g, ns, name).Data["password"]), m.Status.Password)).To(BeTrue(),
		"the stored verifier is the minted password's (values not printed)")
}
