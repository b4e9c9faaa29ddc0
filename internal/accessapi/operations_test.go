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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/verifier"
)

// A Secret of the account's name that credo did not create is never
// written, whatever the cache holds about the account.
func TestForeignSecretIsNeverWritten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credv1.AccountSecretName("db", "app"), Namespace: ns},
		StringData: map[string]string{"password": "someone else's"},
	}
	g.Expect(platform.Create(ctx, foreign, client.FieldOwner("another-tool"))).To(Succeed())
	g.Expect(platform.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: helmv2.HelmReleaseSpec{Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart: "postgres", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"},
		}}},
	})).To(Succeed())
	g.Expect(platform.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: credv1.Format{Name: verifier.SHA256Hex}},
	})).To(Succeed())
	c, _ := newMinter(t, ns)

	for _, rv := range []string{"", foreign.ResourceVersion} {
		m, err := mint(ctx, c, ns, "db", rv)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("was not created by credo"))
		g.Expect(m.Status.Password).To(BeEmpty())
	}
	g.Expect(secretOf(g, ns, foreign.Name).ResourceVersion).To(Equal(foreign.ResourceVersion), "nothing was written")
}

// An account never passes between the platform and a tenant, nor changes
// format: both are refused at admission, and the account mints as before.
func TestOwnerAndFormatAreImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	c, _ := newMinter(t, ns)

	for _, change := range []struct {
		account, message string
		mutate           func(*credv1.CredentialAccount)
	}{
		{"db", "owner is immutable", func(a *credv1.CredentialAccount) { a.Spec.Owner = credv1.OwnerPlatform }},
		{"ch", "owner is immutable", func(a *credv1.CredentialAccount) { a.Spec.Owner = credv1.OwnerTenant }},
		{"ch", "owner is immutable", func(a *credv1.CredentialAccount) { a.Spec.Owner = "" }},
		{"db", "format is immutable", func(a *credv1.CredentialAccount) { a.Spec.Format.Name = verifier.Plain }},
	} {
		var acct credv1.CredentialAccount
		g.Expect(platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: change.account}, &acct)).To(Succeed())
		patch := client.MergeFrom(acct.DeepCopy())
		change.mutate(&acct)
		err := platform.Patch(ctx, &acct, patch)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: got %v", change.account, err)
		g.Expect(err.Error()).To(ContainSubstring(change.message))
	}
	_, err := mint(ctx, c, ns, "db", "")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = mint(ctx, c, ns, "ch", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
}

// notCached is a cache that holds no account yet.
type notCached struct{}

func (notCached) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: credv1.GroupVersion.Group, Resource: "credentialaccounts"}, key.Name)
}

func (notCached) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// An account the cache does not hold yet is read from the API server.
func TestAccountMissingFromTheCacheIsReadFromTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	direct, err := accessapi.NewClient(env.Config, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	ops := &accessapi.Operations{Client: direct, AccountReader: notCached{}, Keys: keys}

	res, err := ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "db"}, "someone")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(matches(verifier.SHA256Hex, string(secretOf(g, ns, s.Name).Data["password"]), res.Password)).To(BeTrue(),
		"the stored verifier is the verifier of the returned password (values not printed)")
	_, err = ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "ch"}, "someone")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	_, err = ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "nope"}, "someone")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}
