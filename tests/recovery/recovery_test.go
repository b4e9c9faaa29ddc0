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

// Package recovery proves what happens to credential accounts while the
// credential-controller is down, on the real control plane with
// kube-controller-manager's namespace controller and garbage collector: a
// tenant namespace deleted meanwhile goes at once, and what the platform
// kept for it is swept when the controller is back.
package recovery

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
)

const (
	annotationDomain  = "credentials.cozystack.io"
	platformNamespace = "credo-system"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{NoManager: true}, func(ctx context.Context, e *testenv.Env) error {
		env = e
		return e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}})
	}))
}

// startController runs the credential-controller's reconcilers in a
// manager built as cmd/credential-controller builds it, until the returned
// stop is called. The periodic sweep is set far off: what is swept here is
// swept at start-up.
func startController(t *testing.T) (stop func()) {
	t.Helper()
	g := NewWithT(t)
	s, err := testenv.NewSetup(env.Config, credentials.NewScheme(), credentials.ControllerName, credentials.ConfigureCache)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	g.Expect(credentials.Setup(ctx, s, credentials.Options{
		AnnotationDomain: annotationDomain, PlatformNamespace: platformNamespace, SweepInterval: time.Hour,
	})).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- s.Manager.Start(ctx) }()
	g.Expect(s.Manager.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
	return func() {
		cancel()
		g.Expect(<-done).To(Succeed())
	}
}

// application is a tenant namespace with a release and its accounts.
type application struct {
	ns, release    string
	platform       *credv1.CredentialAccount
	tenant         *credv1.CredentialAccount
	keptKey        client.ObjectKey
	keptUID        string
	keptPassword   string
	platformSecret client.ObjectKey
}

// newApplication makes a namespace, the release name and its platform
// account (and a tenant account with tenant set), and waits until the
// controller made their Secrets.
func newApplication(t *testing.T, name string, tenant bool) *application {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	hr := testenv.HelmReleaseObject(ns.Name, name, "postgres", nil)
	g.Expect(env.Client.Create(ctx, hr)).To(Succeed())
	app := &application{ns: ns.Name, release: name}
	mk := func(acctName, username string, owner credv1.AccountOwner) *credv1.CredentialAccount {
		a := &credv1.CredentialAccount{
			ObjectMeta: metav1.ObjectMeta{Name: acctName, Namespace: ns.Name},
			Spec: credv1.CredentialAccountSpec{Release: name, Username: username, Owner: owner,
				Format: credv1.Format{Name: verifier.SCRAMSHA256}},
		}
		g.Expect(env.Client.Create(ctx, a)).To(Succeed())
		return a
	}
	app.platform = mk(name+"-postgres", "postgres", credv1.OwnerPlatform)
	if tenant {
		app.tenant = mk(name+"-app", "app", credv1.OwnerTenant)
	}
	app.keptKey = client.ObjectKey{Namespace: platformNamespace, Name: account.KeptSecretName(app.platform)}
	app.platformSecret = client.ObjectKey{Namespace: ns.Name, Name: app.platform.SecretName()}
	keys := account.NewKeys(annotationDomain)
	g.Eventually(func(g Gomega) {
		var kept corev1.Secret
		g.Expect(env.Client.Get(ctx, app.keptKey, &kept)).To(Succeed())
		g.Expect(kept.Labels).To(HaveKey(keys.NamespaceUID), "the kept password is bound to the namespace")
		app.keptUID = string(kept.UID)
		app.keptPassword = string(kept.Data[credv1.PasswordKey])
		g.Expect(env.Client.Get(ctx, app.platformSecret, &corev1.Secret{})).To(Succeed())
		if tenant {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: app.tenant.SecretName()}, &corev1.Secret{})).To(Succeed())
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	return app
}

func keptGone(g Gomega, key client.ObjectKey) bool {
	err := env.Client.Get(context.Background(), key, &corev1.Secret{})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return apierrors.IsNotFound(err)
}

// The review's acceptance: with the credential-controller down, a tenant
// namespace holding platform and tenant accounts is deleted within the
// namespace controller's time (no finalizer of credo's holds it), and once
// the controller is back the platform-side plaintext of its accounts is
// swept; so is that of a release deleted meanwhile, and nothing of an
// application left alone.
func TestNamespaceDeletedWhileTheControllerIsDownIsSweptOnRecovery(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	stop := startController(t)
	deleted := newApplication(t, "pg", true)
	releaseGone := newApplication(t, "db", false)
	untouched := newApplication(t, "ch", true)
	stop()

	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deleted.ns}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: releaseGone.ns, Name: releaseGone.release}})).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: deleted.ns}, &corev1.Namespace{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue(), "the namespace is gone while the controller is down")
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, releaseGone.platformSecret, &corev1.Secret{}))
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the account Secret went with its release")
	g.Expect(keptGone(g, deleted.keptKey)).To(BeFalse(), "nothing swept while the controller is down")
	g.Expect(keptGone(g, releaseGone.keptKey)).To(BeFalse())

	stop = startController(t)
	defer stop()
	g.Eventually(func(g Gomega) {
		g.Expect(keptGone(g, deleted.keptKey)).To(BeTrue(), "the deleted namespace's kept password is swept")
		g.Expect(keptGone(g, releaseGone.keptKey)).To(BeTrue(), "the deleted release's kept password is swept")
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, untouched.keptKey, &kept)).To(Succeed())
	g.Expect(string(kept.UID)).To(Equal(untouched.keptUID), "the other application's kept password stays")
	g.Expect(env.Client.Get(ctx, untouched.platformSecret, &corev1.Secret{})).To(Succeed())
	g.Expect(testenv.CounterValue(g, "credo_credential_records_swept_total",
		map[string]string{"namespace": deleted.ns, "reason": "NamespaceDeleted"})).To(BeNumerically(">=", 1))
	g.Expect(testenv.CounterValue(g, "credo_credential_records_swept_total",
		map[string]string{"namespace": releaseGone.ns, "reason": "ReleaseDeleted"})).To(BeNumerically(">=", 1))

	logs := env.Logs.String()
	g.Expect(logs).To(ContainSubstring("deleted a kept platform password"), "the log scan sees the sweep's lines")
	for i, app := range []*application{deleted, releaseGone, untouched} {
		g.Expect(app.keptPassword).NotTo(BeEmpty())
		g.Expect(strings.Contains(logs, app.keptPassword)).To(BeFalse(), "kept password %d leaked into a log line", i)
	}
}
