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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// accountKeys are the credential-controller's default annotation keys.
var accountKeys = account.NewKeys("credentials.cozystack.io")

// A principal who may write the Secrets of a namespace (the built-in edit
// and admin roles may) can neither plant an account Secret, nor forge the
// identity of an account on one, nor rewrite the password or the record of
// one credo wrote; the credential-controller's ServiceAccount can.
func TestOnlyTheCredentialControllerWritesAccountSecrets(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := secretWriter(t, ns, "oscar")
	credo := userClient(t, credentialControllerUser, credentialControllerGroups...)
	planted := func(name string, annotations map[string]string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
			Type:       corev1.SecretTypeBasicAuth,
			Data:       map[string][]byte{credv1.UsernameKey: []byte("postgres"), credv1.PasswordKey: []byte("forged")},
		}
	}
	// Policies are enforced a moment after they are created.
	g.Eventually(func() error {
		return tenant.Create(ctx, planted(credv1.AccountSecretName("probe", "x"), nil), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")
	expectRefused(g, tenant.Create(ctx, planted(credv1.AccountSecretName("pg", "postgres"), nil)), "creating pg.postgres.account")
	expectRefused(g, tenant.Create(ctx, planted(credv1.AccountSecretName("pg", "postgres"), nil), client.FieldOwner(account.FieldOwner)),
		"creating pg.postgres.account under the credential-controller's field manager")
	expectRefused(g, tenant.Create(ctx, planted("lookalike", map[string]string{accountKeys.AccountUID: "0d1c3f5e-forged"})),
		"creating a Secret claiming an account's UID")

	// An account Secret credo wrote.
	written := planted(credv1.AccountSecretName("pg", "app"), map[string]string{accountKeys.AccountUID: "5b7e-account", accountKeys.Origin: string(credv1.OriginNotIssued)})
	g.Expect(credo.Create(ctx, written, client.FieldOwner(account.FieldOwner))).To(Succeed(), "the credential-controller's ServiceAccount is admitted")
	var cur corev1.Secret
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(written), &cur)).To(Succeed())
	rewritten := cur.DeepCopy()
	rewritten.Data[credv1.PasswordKey] = []byte("the tenant's verifier")
	expectRefused(g, tenant.Update(ctx, rewritten), "rewriting the stored password")
	reclaimed := cur.DeepCopy()
	reclaimed.Annotations[accountKeys.AccountUID] = "another-account"
	expectRefused(g, tenant.Update(ctx, reclaimed), "changing the account the Secret belongs to")
	rerecorded := cur.DeepCopy()
	rerecorded.Annotations[accountKeys.Origin] = string(credv1.OriginMinted)
	expectRefused(g, tenant.Update(ctx, rerecorded), "changing the Secret's record")
	rotationForged := cur.DeepCopy()
	rotationForged.Annotations[accountKeys.MigratedRotation()] = "2026-01-01T00:00:00Z"
	expectRefused(g, tenant.Update(ctx, rotationForged), "recording a migration rotation that never happened, which would stop it")
	rebound := cur.DeepCopy()
	if rebound.Labels == nil {
		rebound.Labels = map[string]string{}
	}
	rebound.Labels[accountKeys.ReleaseUID] = "an-earlier-release"
	expectRefused(g, tenant.Update(ctx, rebound), "binding the Secret to another release, which would have it deleted and migrate skip it")
	exposed := cur.DeepCopy()
	exposed.Annotations[accountKeys.PreviouslyExposed()] = "2026-01-01T00:00:00Z"
	g.Expect(credo.Update(ctx, exposed, client.FieldOwner(account.FieldOwner))).To(Succeed())
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(written), &cur)).To(Succeed())
	unmarked := cur.DeepCopy()
	delete(unmarked.Annotations, accountKeys.PreviouslyExposed())
	expectRefused(g, tenant.Update(ctx, unmarked), "removing the previously-exposed mark of a migrated password")
	frozen := cur.DeepCopy()
	frozen.Immutable = ptr.To(true)
	expectRefused(g, tenant.Update(ctx, frozen), "making the Secret immutable, which would stop its repair")
	noted := cur.DeepCopy()
	noted.Annotations["example.org/note"] = "harmless"
	g.Expect(tenant.Update(ctx, noted)).To(Succeed(), "metadata credo ignores stays writable")
	g.Expect(tenant.Delete(ctx, noted)).To(Succeed(), "deleting is not restricted: the controller recreates the Secret")
}

// An account Secret written before its release exists awaits it
// (<domain>/awaiting-release) and is handed over to the release of that
// name, password and all. A principal who may write the namespace's
// Secrets can neither mark a Secret of an earlier release as awaiting (to
// have credo adopt it), nor lift the mark; the credential-controller can.
func TestATenantCannotForgeOrLiftTheAwaitingReleaseMark(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	tenant := secretWriter(t, ns, "olga")
	credo := userClient(t, credentialControllerUser, credentialControllerGroups...)
	written := func(name string, labels, annotations map[string]string) *corev1.Secret {
		a := map[string]string{accountKeys.AccountUID: "5b7e-account", accountKeys.Origin: string(credv1.OriginNotIssued)}
		for k, v := range annotations {
			a[k] = v
		}
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: a},
			Type:       corev1.SecretTypeBasicAuth,
			Data:       map[string][]byte{credv1.UsernameKey: []byte("app"), credv1.PasswordKey: []byte("a verifier")},
		}
		g.Expect(credo.Create(ctx, s, client.FieldOwner(account.FieldOwner))).To(Succeed(), "the credential-controller's ServiceAccount is admitted")
		var cur corev1.Secret
		g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(s), &cur)).To(Succeed())
		return &cur
	}
	g.Eventually(func() error {
		return tenant.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credv1.AccountSecretName("probe", "x"), Namespace: ns}}, client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")

	// A Secret of an earlier release, marked awaiting by the tenant.
	earlier := written(credv1.AccountSecretName("pg", "app"), map[string]string{accountKeys.ReleaseUID: "an-earlier-release"}, nil)
	forged := earlier.DeepCopy()
	forged.Annotations[accountKeys.AwaitingRelease()] = "pg"
	expectRefused(g, tenant.Update(ctx, forged), "marking a Secret of an earlier release as awaiting its release")
	forged.Annotations[accountKeys.AwaitingRelease()] = "other"
	expectRefused(g, tenant.Update(ctx, forged), "marking it as awaiting another release")

	// A Secret awaiting its release: the mark stays credo's.
	awaiting := written(credv1.AccountSecretName("pg", "root"), nil, map[string]string{accountKeys.AwaitingRelease(): "pg"})
	lifted := awaiting.DeepCopy()
	delete(lifted.Annotations, accountKeys.AwaitingRelease())
	expectRefused(g, tenant.Update(ctx, lifted), "lifting the awaiting mark")
	moved := awaiting.DeepCopy()
	moved.Annotations[accountKeys.AwaitingRelease()] = "another"
	expectRefused(g, tenant.Update(ctx, moved), "pointing the mark at another release")

	handedOver := awaiting.DeepCopy()
	delete(handedOver.Annotations, accountKeys.AwaitingRelease())
	handedOver.Labels = map[string]string{accountKeys.ReleaseUID: "the-release"}
	g.Expect(credo.Update(ctx, handedOver, client.FieldOwner(account.FieldOwner))).To(Succeed(), "credo hands the Secret over")
}

// A principal who may write the CredentialAccounts of a namespace (through
// its GitOps, say) declares, changes and deletes its own accounts, but no
// platform account nor one an AccountSource generated; the platform does.
func TestOnlyThePlatformWritesPlatformAccounts(t *testing.T) {
	admissionPolicy(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	user := "gitops-tenant"
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "accounts", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{credv1.GroupVersion.Group}, Resources: []string{"credentialaccounts"}, Verbs: []string{"*"}}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "accounts", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "accounts"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	tenant := userClient(t, user)
	declare := func(name string, owner credv1.AccountOwner, labels map[string]string) *credv1.CredentialAccount {
		return &credv1.CredentialAccount{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec:       credv1.CredentialAccountSpec{Release: "db", Username: name, Format: credv1.Format{Name: "scram-sha-256"}, Owner: owner},
		}
	}
	g.Eventually(func() error {
		return tenant.Create(ctx, declare("probe", credv1.OwnerPlatform, nil), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")

	expectRefused(g, tenant.Create(ctx, declare("root", credv1.OwnerPlatform, nil)), "declaring a platform account")
	expectRefused(g, tenant.Create(ctx, declare("gen", credv1.OwnerTenant, map[string]string{credv1.SourceLabel: "postgres-users"})),
		"declaring an account as if an AccountSource generated it")
	g.Expect(tenant.Create(ctx, declare("app", credv1.OwnerTenant, nil))).To(Succeed(), "its own accounts are the tenant's")

	// The platform's account, declared by the platform.
	root := declare("root", credv1.OwnerPlatform, nil)
	g.Expect(env.Client.Create(ctx, root)).To(Succeed(), "the platform's administrator is admitted")
	var cur credv1.CredentialAccount
	g.Expect(tenant.Get(ctx, client.ObjectKeyFromObject(root), &cur)).To(Succeed())
	suspended := cur.DeepCopy()
	suspended.Spec.Suspend = true
	expectRefused(g, tenant.Update(ctx, suspended), "suspending a platform account")
	rotated := cur.DeepCopy()
	rotated.Spec.Rotate = "now"
	expectRefused(g, tenant.Update(ctx, rotated), "rotating a platform account")
	expectRefused(g, tenant.Delete(ctx, &cur), "deleting a platform account")
	g.Expect(userClient(t, credentialControllerUser, credentialControllerGroups...).Create(ctx,
		declare("backup", credv1.OwnerPlatform, nil), client.DryRunAll)).To(Succeed(), "the credential-controller's ServiceAccount is admitted")
}

// credo writes an account's secretLabels under its own identity, which the
// trust policy admits as a publisher: the contract labels are refused there,
// so that no account makes credo publish a CA or pose as a projection.
func TestSecretLabelsCannotCarryCredosContractLabels(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	for _, key := range []string{keys.PublishCACert, keys.Release, keys.TenantCA, "example.org/publish-ca-cert", accountKeys.Account} {
		err := dryRun(&credv1.CredentialAccount{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: credv1.Format{Name: "scram-sha-256"},
				SecretLabels: map[string]string{key: "true"}},
		})
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "secretLabels %s: %v", key, err)
		err = dryRun(&credv1.AccountSource{
			ObjectMeta: metav1.ObjectMeta{Name: "users"},
			Spec: credv1.AccountSourceSpec{Chart: "postgres", Sources: []credv1.AccountSourceEntry{{
				Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}, SecretLabels: map[string]string{key: "true"}},
			}}},
		})
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "template secretLabels %s: %v", key, err)
	}
	g.Expect(dryRun(&credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: "db", Username: "app", Format: credv1.Format{Name: "scram-sha-256"},
			SecretLabels: map[string]string{"cnpg.io/reload": "true"}},
	})).To(Succeed(), "an operator's label is fine")
}
