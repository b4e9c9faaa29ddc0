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
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	return env.NewNamespace(t)
}

// newAccount declares a HelmRelease and a CredentialAccount and waits for
// the controller to write the account Secret; it returns the Secret.
func newAccount(t testing.TB, ns, name, username, format string, owner credv1.AccountOwner) *corev1.Secret {
	t.Helper()
	ctx := context.Background()
	env.NewHelmRelease(t, ns, name, "postgres", nil)
	a := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: credv1.CredentialAccountSpec{
			Release: name, Username: username, Format: credv1.Format{Name: format}, Owner: owner,
		},
	}
	if err := platform.Create(ctx, a); err != nil {
		t.Fatalf("creating CredentialAccount: %v", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName(name, username)}
	var s corev1.Secret
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := platform.Get(ctx, key, &s)
		if err == nil && s.Annotations[keys.Origin] != "" {
			return &s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the account Secret %s was not written: %v", key, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func secretOf(g Gomega, ns, name string) *corev1.Secret {
	var s corev1.Secret
	g.Expect(platform.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

// userClient returns a client authenticated as a new user without groups.
func userClient(t testing.TB, name string) client.Client {
	t.Helper()
	cfg, err := env.UserConfig(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// grant gives user a Role in ns with verbs on resources of group.
func grant(t testing.TB, ns, user, group string, resources, verbs []string) {
	t.Helper()
	ctx := context.Background()
	name := "grant-" + rand.String(6)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: resources, Verbs: verbs}},
	}
	if err := platform.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	bindRole(t, ns, user, "Role", name)
}

func bindRole(t testing.TB, ns, user, kind, role string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bind-" + rand.String(6), Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := platform.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
}

// newMinter returns a client of a new user allowed to mint and revoke in
// ns (the shipped ClusterRoles credo-mint and credo-revoke, bound in ns),
// and the user's name.
func newMinter(t testing.TB, ns string) (client.Client, string) {
	t.Helper()
	shippedRoles(t)
	user := "minter-" + rand.String(6)
	bindRole(t, ns, user, "ClusterRole", "credo-mint")
	bindRole(t, ns, user, "ClusterRole", "credo-revoke")
	c := userClient(t, user)
	// RBAC is read from the authorizer's cache: wait until it allows.
	waitAllowed(t, c, ns)
	return c, user
}

// waitAllowed waits until a mint of a missing account answers 404 (allowed,
// nothing found) rather than 403.
func waitAllowed(t testing.TB, c client.Client, ns string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := c.Create(context.Background(), &accessv1.Mint{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: ns},
			Spec:       accessv1.AccountRequestSpec{Account: "no-such-account-probe"},
		})
		if err != nil && strings.Contains(err.Error(), "not found") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the minter is still not allowed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mint(ctx context.Context, c client.Client, ns, acct, rv string) (*accessv1.Mint, error) {
	m := &accessv1.Mint{
		ObjectMeta: metav1.ObjectMeta{GenerateName: acct + "-", Namespace: ns},
		Spec:       accessv1.AccountRequestSpec{Account: acct, ResourceVersion: rv},
	}
	return m, c.Create(ctx, m)
}

// mintAccount posts a Mint to accounts/<acct>/mint; specAccount is the
// body's spec.account (empty, or the same name, or another to be refused).
func mintAccount(ctx context.Context, c client.Client, ns, acct, specAccount, rv string) (*accessv1.Mint, error) {
	m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: specAccount, ResourceVersion: rv}}
	return m, c.SubResource("mint").Create(ctx, accountRef(ns, acct), m)
}

// revokeAccount posts a Revocation to accounts/<acct>/revocation.
func revokeAccount(ctx context.Context, c client.Client, ns, acct string) (*accessv1.Revocation, error) {
	r := &accessv1.Revocation{}
	return r, c.SubResource("revocation").Create(ctx, accountRef(ns, acct), r)
}

func accountRef(ns, name string) *accessv1.Account {
	return &accessv1.Account{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// waitAllowedOn waits until a post to accounts/<missing>/<subresource>
// answers 404 (allowed, nothing found) rather than 403.
func waitAllowedOn(t testing.TB, c client.Client, ns, subresource string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if subresource == "mint" {
			_, err = mintAccount(context.Background(), c, ns, "no-such-account-probe", "", "")
		} else {
			_, err = revokeAccount(context.Background(), c, ns, "no-such-account-probe")
		}
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the user is still not allowed to create accounts/%s: %v", subresource, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// matches reports whether the stored value is the verifier of password.
func matches(format, stored, password string) bool {
	switch format {
	case verifier.SHA256Hex:
		sum := sha256.Sum256([]byte(password))
		return hex.EncodeToString(sum[:]) == stored
	case verifier.SCRAMSHA256:
		rest, ok := strings.CutPrefix(stored, "SCRAM-SHA-256$4096:")
		if !ok {
			return false
		}
		b64, _, ok := strings.Cut(rest, "$")
		if !ok {
			return false
		}
		salt, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return false
		}
		return verifier.SCRAMWithSalt(password, salt, verifier.SCRAMIterations) == stored
	case verifier.Plain:
		return stored == password
	}
	return false
}
