//go:build e2e

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

package e2e

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// Accounts before the engine starts (seed 002, "bootstrap ordering is
// free"): an account's Secret is written before its HelmRelease exists, so
// that a chart reading it when it first renders (testdata/charts/
// root-consumer `required`s <release>.root.account through `lookup`, as a
// database chart reads its root password at datadir time) installs the
// first time, with the real helm-controller; the release then takes the
// Secret over, and garbage collection (kube-controller-manager) removes it
// with the release.

// accountKeysE2E are the credential-controller's default keys.
var accountKeysE2E = account.NewKeys("credentials.cozystack.io")

// rootAccount declares the platform account root of release in ns
// (mysql-native), as the platform declares an engine's root account.
func rootAccount(t testing.TB, ns, release string) *credv1.CredentialAccount {
	t.Helper()
	acct := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: release + "-root", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: release, Username: "root",
			Format: credv1.Format{Name: "mysql-native"}, Owner: credv1.OwnerPlatform},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), acct)).To(Succeed())
	return acct
}

// rootRelease creates the HelmRelease release of the chart root-consumer,
// served as the ExternalArtifact ea.
func rootRelease(t testing.TB, ea *sourcev1.ExternalArtifact, release string) *helmv2.HelmRelease {
	t.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: release, Namespace: ea.Namespace},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: ea.Name, Namespace: ea.Namespace},
		},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), hr)).To(Succeed())
	return hr
}

// pendingSecret waits until acct has reconciled its generation, Ready with
// ReleasePending, and returns its Secret: owned by the account, awaiting
// the release.
func pendingSecret(t testing.TB, acct *credv1.CredentialAccount) *corev1.Secret {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	var a credv1.CredentialAccount
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(acct), &a)).To(Succeed())
		return a.Status.ObservedGeneration == a.Generation
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "the account is reconciled: %+v", a.Status.Conditions)
	var s corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: acct.SecretName()}, &s)).To(Succeed(),
		"the account's Secret exists before its release: %+v", a.Status.Conditions)
	g.Expect(conditions.IsReady(&a)).To(BeTrue(), "%+v", a.Status.Conditions)
	g.Expect(conditions.GetReason(&a, credv1.ReleasePendingCondition)).To(Equal(credv1.HelmReleaseNotFoundReason))
	g.Expect(s.OwnerReferences).To(ConsistOf(And(HaveField("Kind", credv1.CredentialAccountKind), HaveField("UID", a.UID))))
	g.Expect(s.Annotations).To(HaveKeyWithValue(accountKeysE2E.AwaitingRelease(), acct.Spec.Release))
	return &s
}

// installedFirstTime waits until helm-controller installed hr, and checks
// that its first install succeeded (one release version, no failure) and
// that the chart read the Secret of UID want.
func installedFirstTime(t testing.TB, hr *helmv2.HelmRelease, want corev1.Secret) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		g.Expect(conditions.GetReason(hr, meta.ReadyCondition)).NotTo(Equal(helmv2.InstallFailedReason),
			"the first install failed: %+v", hr.Status.Conditions)
		return conditions.IsReady(hr)
	}, 3*time.Minute, 250*time.Millisecond).Should(BeTrue(), "HelmRelease installed: %+v\nhelm-controller's log, last lines:\n%s",
		hr.Status.Conditions, helmControllerLogTail(40))
	g.Expect(hr.Status.InstallFailures).To(BeZero())
	g.Expect(hr.Status.History).To(HaveLen(1), "one install, no retry")
	g.Expect(hr.Status.History[0].Status).To(Equal("deployed"))
	var cm corev1.ConfigMap
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: hr.Namespace, Name: hr.Name + "-root"}, &cm)).To(Succeed())
	g.Expect(cm.Data).To(HaveKeyWithValue("secretUID", string(want.UID)), "the chart read the account's Secret")
	g.Expect(cm.Data).To(HaveKeyWithValue("hasPassword", "true"))
}

// takenOver waits until the Secret before is owned by hr, with the same
// password, and returns it.
func takenOver(t testing.TB, before *corev1.Secret, hr *helmv2.HelmRelease) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(before), &s)).To(Succeed())
		g.Expect(s.UID).To(Equal(before.UID), "the same Secret")
		g.Expect(s.OwnerReferences).To(ConsistOf(And(HaveField("Kind", helmv2.HelmReleaseKind), HaveField("UID", hr.UID))))
		g.Expect(s.Labels).To(HaveKeyWithValue(accountKeysE2E.ReleaseUID, string(hr.UID)))
		g.Expect(s.Annotations).NotTo(HaveKey(accountKeysE2E.AwaitingRelease()))
	}, time.Minute, 250*time.Millisecond).Should(Succeed())
	NewWithT(t).Expect(sha256.Sum256(s.Data[credv1.PasswordKey]) == sha256.Sum256(before.Data[credv1.PasswordKey])).To(BeTrue(),
		"the same password (compared by hash, never printed)")
	return &s
}

// collected waits until garbage collection removed the Secret s.
func collected(t testing.TB, s *corev1.Secret) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		var now corev1.Secret
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), &now)
		return apierrors.IsNotFound(err) || (err == nil && now.UID != s.UID)
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "Secret %s (UID %s) is garbage-collected", s.Name, s.UID)
}

// The account alone gets its Secret; the release of a chart that requires
// it installs the first time; the release takes the Secret over with its
// password; deleting the release garbage-collects it.
func TestAccountSecretExistsBeforeHelmControllerInstalls(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-first-")
	acct := rootAccount(t, ns, "db")
	before := pendingSecret(t, acct)

	hr := rootRelease(t, newExternalArtifact(t, ns, "root-consumer"), "db")
	installedFirstTime(t, hr, *before)
	owned := takenOver(t, before, hr)

	g.Expect(k8s.Delete(ctx, hr)).To(Succeed())
	collected(t, owned)
	// The account, still declared, has a new Secret awaiting the next
	// release, with a new password: nothing of the deleted one carries over.
	again := pendingSecret(t, acct)
	g.Expect(again.UID).NotTo(Equal(owned.UID))
	g.Expect(sha256.Sum256(again.Data[credv1.PasswordKey]) == sha256.Sum256(owned.Data[credv1.PasswordKey])).To(BeFalse(),
		"a new password (compared by hash, never printed)")
}

// The account and its release applied in one batch, account first, as one
// Kustomization applies them (by kind): the release still installs the
// first time and ends up owning the account's Secret, and the account
// never waits on its release.
func TestAccountAndReleaseTogether(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-together-")
	ea := newExternalArtifact(t, ns, "root-consumer")
	acct := rootAccount(t, ns, "db")
	hr := rootRelease(t, ea, "db")

	var s corev1.Secret
	g.Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: acct.SecretName()}, &s)
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	installedFirstTime(t, hr, s)
	owned := takenOver(t, &s, hr)
	var a credv1.CredentialAccount
	g.Eventually(func() bool {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(acct), &a)).To(Succeed())
		return conditions.IsReady(&a) && conditions.Get(&a, credv1.ReleasePendingCondition) == nil
	}, time.Minute, 250*time.Millisecond).Should(BeTrue(), "Ready, the release no longer pending: %+v", a.Status.Conditions)
	g.Eventually(func() []string { return accountEventReasons(ctx, ns, acct.Name) }, 30*time.Second, 250*time.Millisecond).
		Should(ContainElement(credv1.SecretCreatedReason))
	g.Expect(accountEventReasons(ctx, ns, acct.Name)).NotTo(ContainElement(credv1.HelmReleaseNotFoundReason),
		"the account was never held back by its release")

	g.Expect(k8s.Delete(ctx, hr)).To(Succeed())
	collected(t, owned)
}

// accountEventReasons are the reasons of the events recorded on the
// CredentialAccount name of ns.
func accountEventReasons(ctx context.Context, ns, name string) []string {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return nil
	}
	var out []string
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == credv1.CredentialAccountKind && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// An account deleted before its release existed takes its Secret (and its
// kept password) with it: the release created after finds no Secret, and
// its chart, which requires one, does not install.
func TestDeletedAccountBeforeReleaseLeavesNoSecret(t *testing.T) {
	needLocal(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-gone-")
	acct := rootAccount(t, ns, "db")
	s := pendingSecret(t, acct)
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(acct), acct)).To(Succeed())
	keptKey := client.ObjectKey{Namespace: credoNamespace, Name: account.KeptSecretName(acct)}
	g.Expect(k8s.Get(ctx, keptKey, &corev1.Secret{})).To(Succeed(), "the platform password is kept")

	g.Expect(k8s.Delete(ctx, acct)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})) &&
			apierrors.IsNotFound(k8s.Get(ctx, keptKey, &corev1.Secret{}))
	}, 2*time.Minute, 250*time.Millisecond).Should(BeTrue(), "the Secret and the kept password go with the account")

	hr := rootRelease(t, newExternalArtifact(t, ns, "root-consumer"), "db")
	g.Eventually(func() string {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		return conditions.GetReason(hr, meta.ReadyCondition)
	}, 3*time.Minute, 250*time.Millisecond).Should(Equal(helmv2.InstallFailedReason),
		"the chart finds no Secret: %+v", hr.Status.Conditions)
	g.Expect(conditions.GetMessage(hr, meta.ReadyCondition)).To(ContainSubstring("Secret db.root.account does not exist"))
	g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}))).To(BeTrue())
}
