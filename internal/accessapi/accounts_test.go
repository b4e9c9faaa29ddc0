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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
)

// POST .../accounts/<account>/mint mints that account, with spec.account
// empty or equal to the URL's name; another name is a 400 and writes nothing.
func TestSubresourceMint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	before := newAccount(t, ns, "db", "app", verifier.SCRAMSHA256, credv1.OwnerTenant)
	newAccount(t, ns, "other", "reader", verifier.SCRAMSHA256, credv1.OwnerTenant)
	// Only the subresource: the collection is not needed.
	user := "sub-minter-" + rand.String(6)
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"accounts/mint"}, []string{"create"})
	c := userClient(t, user)
	waitAllowedOn(t, c, ns, "mint")

	m, err := mintAccount(ctx, c, ns, "db", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Spec.Account).To(Equal("db"), "the URL's account is the request's")
	g.Expect(len(m.Status.Password)).To(BeNumerically(">=", 32))
	g.Expect(m.Status.Username).To(Equal("app"))
	g.Expect(m.Status.SecretName).To(Equal(before.Name))
	s := secretOf(g, ns, before.Name)
	g.Expect(s.ResourceVersion).To(Equal(m.Status.ResourceVersion))
	g.Expect(matches(verifier.SCRAMSHA256, string(s.Data["password"]), m.Status.Password)).To(BeTrue(),
		"the stored verifier is the verifier of the returned password (values not printed)")
	h := account.ParseHistory(s.Annotations[keys.History])
	g.Expect(h[len(h)-1].Operation).To(Equal(credv1.OriginMinted))
	g.Expect(h[len(h)-1].By).To(Equal(user))

	// spec.account equal to the URL's name is accepted.
	m2, err := mintAccount(ctx, c, ns, "db", "db", m.Status.ResourceVersion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m2.Status.Password != m.Status.Password).To(BeTrue(), "a new password (values not printed)")

	// Another account in the body than in the URL is refused, whatever exists.
	otherBefore := secretOf(g, ns, credv1.AccountSecretName("other", "reader"))
	dbBefore := secretOf(g, ns, before.Name)
	m3, err := mintAccount(ctx, c, ns, "db", "other", "")
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`spec.account "other" does not match the account "db" in the URL`))
	g.Expect(m3.Status.Password).To(BeEmpty())
	g.Expect(secretOf(g, ns, before.Name).ResourceVersion).To(Equal(dbBefore.ResourceVersion), "nothing was written")
	g.Expect(secretOf(g, ns, otherBefore.Name).ResourceVersion).To(Equal(otherBefore.ResourceVersion), "nothing was written")

	// The same errors as the collection: a missing account, a dry run.
	_, err = mintAccount(ctx, c, ns, "nope", "", "")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	err = c.SubResource("mint").Create(ctx, accountRef(ns, "db"), &accessv1.Mint{}, client.DryRunAll)
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("dry run is not supported"))
	g.Expect(secretOf(g, ns, before.Name).ResourceVersion).To(Equal(dbBefore.ResourceVersion), "nothing was written")
}

// kubectl create --raw POSTs a Mint to the subresource, as the docs show.
func TestKubectlCreateRawMint(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	_, user := newMinter(t, ns)
	kubeconfig, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	body := filepath.Join(t.TempDir(), "mint.json")
	g.Expect(os.WriteFile(body, []byte(`{"apiVersion": "access.credo.dev/v1alpha1", "kind": "Mint", "spec": {}}`), 0o600)).To(Succeed())
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	// From a file (docs/spec/v1alpha1/mints.md) and from stdin (docs/guides/headless-pipelines.md).
	for _, file := range []string{body, "-"} {
		cmd := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfig, "create", "-f", file,
			"--raw", "/apis/access.credo.dev/v1alpha1/namespaces/"+ns+"/accounts/db/mint")
		if file == "-" {
			f, err := os.Open(body)
			g.Expect(err).NotTo(HaveOccurred())
			defer f.Close()
			cmd.Stdin = f
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		g.Expect(cmd.Run()).To(Succeed(), "kubectl: %s", stderr.String())
		var m accessv1.Mint
		g.Expect(json.Unmarshal([]byte(stdout.String()), &m)).To(Succeed())
		g.Expect(m.Spec.Account).To(Equal("db"))
		g.Expect(matches(verifier.SHA256Hex, string(secretOf(g, ns, s.Name).Data["password"]), m.Status.Password)).To(BeTrue(),
			"kubectl printed the minted password (value not printed)")
	}
}

// A user who may only create accounts/revocation revokes, and gets 403 from
// kube-apiserver for a mint in either form.
func TestRevokerCannotMint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	minter, _ := newMinter(t, ns)
	m, err := mintAccount(ctx, minter, ns, "db", "", "")
	g.Expect(err).NotTo(HaveOccurred())

	user := "revoker-" + rand.String(6)
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"accounts/revocation"}, []string{"create"})
	c := userClient(t, user)
	waitAllowedOn(t, c, ns, "revocation")

	minted := secretOf(g, ns, s.Name)
	_, err = mintAccount(ctx, c, ns, "db", "", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`cannot create resource "accounts/mint" in API group "access.credo.dev"`),
		"kube-apiserver's RBAC refused it")
	_, err = mint(ctx, c, ns, "db", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(`cannot create resource "mints"`))
	g.Expect(secretOf(g, ns, s.Name).ResourceVersion).To(Equal(minted.ResourceVersion), "nothing was written")

	r, err := revokeAccount(ctx, c, ns, "db")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Spec.Account).To(Equal("db"))
	after := secretOf(g, ns, s.Name)
	g.Expect(after.ResourceVersion).To(Equal(r.Status.ResourceVersion))
	g.Expect(after.Annotations[keys.Origin]).To(Equal(string(credv1.OriginRevoked)))
	g.Expect(matches(verifier.SHA256Hex, string(after.Data["password"]), m.Status.Password)).To(BeFalse(),
		"the minted password no longer matches after the revocation")
	h := account.ParseHistory(after.Annotations[keys.History])
	g.Expect(h[len(h)-1].By).To(Equal(user))
}

// get and list on accounts show the record and the Secret's resourceVersion
// and never the password; a mint with that version as expected is accepted.
func TestAccountViewHoldsNoPasswordAndItsVersionMints(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.Plain, credv1.OwnerTenant)
	newAccount(t, ns, "ch", "root", verifier.SHA256Hex, credv1.OwnerPlatform)
	minter, minterName := newMinter(t, ns)
	m, err := mint(ctx, minter, ns, "db", "")
	g.Expect(err).NotTo(HaveOccurred())
	stored := secretOf(g, ns, s.Name)
	// A plaintext account: the Secret holds the password itself, the worst case for a leak.
	g.Expect(string(stored.Data["password"]) == m.Status.Password).To(BeTrue(), "values not printed")

	// The shipped view role, and nothing else.
	shippedRoles(t)
	viewer := "account-viewer-" + rand.String(6)
	bindRole(t, ns, viewer, "ClusterRole", "credo-access-view")
	vc := userClient(t, viewer)
	var a accessv1.Account
	g.Eventually(func() error {
		return vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &a)
	}, "20s", "100ms").Should(Succeed(), "the viewer's RBAC is in effect")
	// The account's Applied condition, once the controller set it after
	// the mint: nothing credo observes reads this plaintext Secret.
	g.Eventually(func() *accessv1.AccountApplied {
		g.Expect(vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &a)).To(Succeed())
		return a.Status.Applied
	}, "20s", "100ms").Should(And(Not(BeNil()), HaveField("Status", "Unknown"), HaveField("Reason", credv1.EngineNotObservedReason)))
	// And its Ready condition, as kubectl credo get shows it.
	g.Expect(a.Status.Ready).To(And(Not(BeNil()), HaveField("Status", "True")))
	g.Expect(a.Spec).To(Equal(accessv1.AccountSpec{Release: "db", Username: "app", Owner: "tenant", Format: verifier.Plain, FormatKind: "BuiltIn"}))
	g.Expect(a.Status.SecretName).To(Equal(s.Name))
	g.Expect(a.Status.SecretResourceVersion).To(Equal(stored.ResourceVersion))
	g.Expect(a.Status.Origin).To(Equal(string(credv1.OriginMinted)))
	g.Expect(a.Status.History).NotTo(BeEmpty())
	last := a.Status.History[len(a.Status.History)-1]
	g.Expect(last.Operation).To(Equal(string(credv1.OriginMinted)))
	g.Expect(last.By).To(Equal(minterName))
	g.Expect(a.Status.LastChange).NotTo(BeNil())
	g.Expect(a.Status.LastChange.Equal(&last.At)).To(BeTrue())

	var list accessv1.AccountList
	g.Expect(vc.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1), "the platform account ch is not in the view")
	g.Expect(list.Items[0].Name).To(Equal("db"))
	g.Expect(list.Items[0].Status).To(Equal(a.Status))
	// Field selectors on name and namespace, across namespaces too; others are refused.
	g.Expect(vc.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{"metadata.name": "db"})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	g.Expect(list.Items[0].Status).To(Equal(a.Status))
	g.Expect(platform.List(ctx, &list, client.MatchingFields{"metadata.namespace": ns})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	err = vc.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{"spec.owner": "tenant"})
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)

	// The raw responses, every field the server sent: no password, in any form.
	cfg, err := env.UserConfig(viewer, nil)
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	base := "/apis/access.credo.dev/v1alpha1/namespaces/" + ns + "/accounts"
	for _, path := range []string{base + "/db", base} {
		raw, err := cs.RESTClient().Get().AbsPath(path).DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(raw)).To(ContainSubstring(stored.ResourceVersion))
		g.Expect(strings.Contains(string(raw), m.Status.Password)).To(BeFalse(), "the view holds no password (value not printed)")
		g.Expect(string(raw)).NotTo(ContainSubstring(`"password"`))
	}
	// The viewer may read accounts, not mint, nor read the Secret.
	_, err = mintAccount(ctx, vc, ns, "db", "", "")
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)

	// kubectl get accounts prints the view.
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := env.WriteKubeconfig(viewer, nil, viewer+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	out, err := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfig, "get", "accounts", "-n", ns, "-o", "wide").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(MatchRegexp(`(?m)^db\s+db\s+app\s+tenant\s+plaintext\s+Minted\s+` + stored.ResourceVersion + `\s`))
	g.Expect(strings.Contains(string(out), m.Status.Password)).To(BeFalse(), "value not printed")

	// The version from the view is a mint's expected version: accepted once,
	// then stale.
	m2, err := mintAccount(ctx, minter, ns, "db", "", a.Status.SecretResourceVersion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(secretOf(g, ns, s.Name).Data["password"]) == m2.Status.Password).To(BeTrue(), "values not printed")
	_, err = mintAccount(ctx, minter, ns, "db", "", a.Status.SecretResourceVersion)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
	g.Expect(vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &a)).To(Succeed())
	g.Expect(a.Status.SecretResourceVersion).To(Equal(m2.Status.ResourceVersion))

	// A missing account is 404 with the accounts resource.
	err = vc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nope"}, &accessv1.Account{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}
