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
// credential-controller is down, on credo installed as users install it
// (tests/devenv: config/default and config/apiservice, the controller
// binaries as processes under their ServiceAccounts) with
// kube-controller-manager's namespace controller and garbage collector.
// The access API's APIService is registered and served by the
// credential-controller, so with every replica gone kube-apiserver cannot
// complete discovery: a tenant namespace deleted meanwhile stays
// Terminating until the controller is back (kubernetes/kubernetes#75788),
// and what the platform kept for it is swept on recovery.
package recovery

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
	"github.com/credo-dev/credo/tests/testenv"
)

// annotationDomain is the credential-controller's default
// --annotation-domain, which devenv runs it with.
const annotationDomain = "credentials.cozystack.io"

var env *devenv.Environment

// TestMain installs credo as `make dev` does, with no samples and no
// helm-controller (nothing here installs a chart): devenv.Start returns
// once the APIService of config/apiservice is Available, served by the
// credential-controller process.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	e, err := devenv.Start(ctx, devenv.Options{Samples: "-", Flux: []string{controlplane.NotificationController}})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting credo: %v\n", err)
		return 1
	}
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping credo: %v\n", err)
		}
	}()
	env = e
	return m.Run()
}

// credentialController is the credential-controller as it runs now.
func credentialController(g Gomega) devenv.Controller {
	c, err := env.Controller(devenv.AccessAPIController)
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// showLogOnFailure logs the end of the credential-controller's log when
// the test failed: the environment's directory is removed after.
func showLogOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if c, err := env.Controller(devenv.AccessAPIController); t.Failed() && err == nil {
			t.Logf("the credential-controller's log (%s), its end:\n%s", c.Process.LogPath(), c.Process.Tail(40))
		}
	})
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
	app.keptKey = client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: account.KeptSecretName(app.platform)}
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

// keptReplacedOrGone reports whether the kept password of uid at key is
// gone: deleted, or replaced by another Secret of that name.
func keptReplacedOrGone(g Gomega, key client.ObjectKey, uid string) bool {
	var s corev1.Secret
	err := env.Client.Get(context.Background(), key, &s)
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return apierrors.IsNotFound(err) || string(s.UID) != uid
}

// apiServiceAvailable returns the status of the access API's APIService's
// Available condition, as kube-apiserver judges it.
func apiServiceAvailable(g Gomega) apiregistrationv1.ConditionStatus {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: accessapi.APIServiceName}, u)).To(Succeed())
	var as apiregistrationv1.APIService
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &as)).To(Succeed())
	for _, c := range as.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status
		}
	}
	return apiregistrationv1.ConditionUnknown
}

// expectTerminatingOnDiscovery expects the namespace name to be
// Terminating, held by kube-controller-manager's namespace controller
// because discovery failed; it stops an Eventually at once when the
// namespace is gone.
func expectTerminatingOnDiscovery(g Gomega, name string) {
	var ns corev1.Namespace
	err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		StopTrying("the namespace is gone while the access API is down").Now()
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ns.Status.Phase).To(Equal(corev1.NamespaceTerminating))
	g.Expect(ns.Status.Conditions).To(ContainElement(And(
		HaveField("Type", corev1.NamespaceDeletionDiscoveryFailure),
		HaveField("Status", corev1.ConditionTrue),
	)), "the namespace controller could not discover every API")
}

// The review's acceptance, with the APIService registered as users install
// it. Every credential-controller replica gone, the APIService turns
// Available=False and kube-controller-manager's namespace controller
// cannot finish discovery: a tenant namespace deleted then stays
// Terminating with NamespaceDeletionDiscoveryFailure=True (the content it
// could discover, the accounts and the release among it, is deleted
// meanwhile; no finalizer of credo's holds anything). Once the controller
// is back the namespace goes, and the platform-side plaintext of its
// accounts is swept; so is that of a release deleted meanwhile, and
// nothing of an application left alone.
func TestNamespaceDeletedWhileTheControllerIsDownWaitsForItAndIsSweptOnRecovery(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	showLogOnFailure(t)
	deleted := newApplication(t, "pg", true)
	releaseGone := newApplication(t, "db", false)
	untouched := newApplication(t, "ch", true)

	stopped := time.Now()
	g.Expect(env.StopController(devenv.AccessAPIController)).To(Succeed())
	// kube-apiserver checks an APIService's server on its own schedule.
	g.Eventually(apiServiceAvailable, 2*time.Minute, 500*time.Millisecond).Should(Equal(apiregistrationv1.ConditionFalse),
		"with no credential-controller the APIService is not Available")
	t.Logf("the APIService turned Available=False %s after the credential-controller stopped", time.Since(stopped).Round(time.Second))

	nsDeleted := time.Now()
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deleted.ns}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: releaseGone.ns, Name: releaseGone.release}})).To(Succeed())
	g.Eventually(func(g Gomega) { expectTerminatingOnDiscovery(g, deleted.ns) }, 2*time.Minute, 200*time.Millisecond).Should(Succeed(),
		"the deleted namespace waits for the access API")
	t.Logf("the namespace carried NamespaceDeletionDiscoveryFailure=True %s after its deletion", time.Since(nsDeleted).Round(time.Second))
	g.Eventually(func(g Gomega) {
		var accounts credv1.CredentialAccountList
		g.Expect(env.Client.List(ctx, &accounts, client.InNamespace(deleted.ns))).To(Succeed())
		g.Expect(accounts.Items).To(BeEmpty())
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: deleted.ns, Name: deleted.release}, &helmv2.HelmRelease{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the release: %v", err)
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "the namespace controller deletes the content it discovered")
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, releaseGone.platformSecret, &corev1.Secret{}))
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "the account Secret went with its release")
	g.Consistently(func(g Gomega) { expectTerminatingOnDiscovery(g, deleted.ns) }, 10*time.Second, time.Second).Should(Succeed(),
		"the namespace stays Terminating while the access API is down")
	g.Expect(keptGone(g, deleted.keptKey)).To(BeFalse(), "nothing swept while the controller is down")
	g.Expect(keptGone(g, releaseGone.keptKey)).To(BeFalse())

	restarted := time.Now()
	g.Expect(env.StartController(ctx, devenv.AccessAPIController)).To(Succeed())
	var available time.Duration
	// The namespace controller retries a failed deletion with a backoff
	// that doubles up to a minute, and kube-apiserver judges the
	// APIService again on its own schedule: the namespace may take a few
	// minutes to go.
	g.Eventually(func() bool {
		if available == 0 && apiServiceAvailable(g) == apiregistrationv1.ConditionTrue {
			available = time.Since(restarted)
		}
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: deleted.ns}, &corev1.Namespace{}))
	}, 3*time.Minute, 500*time.Millisecond).Should(BeTrue(), "the namespace is gone once the controller is back")
	t.Logf("after the credential-controller restarted: the APIService Available again within %s, the namespace gone %s",
		available.Round(time.Second), time.Since(restarted).Round(time.Second))

	g.Eventually(func(g Gomega) {
		g.Expect(keptGone(g, deleted.keptKey)).To(BeTrue(), "the deleted namespace's kept password is swept")
		// The release's account is still declared: it may already await
		// the next release with a kept password of its own (a new one,
		// bound to no release yet); the deleted release's is gone.
		g.Expect(keptReplacedOrGone(g, releaseGone.keptKey, releaseGone.keptUID)).To(BeTrue(), "the deleted release's kept password is swept")
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	var kept corev1.Secret
	g.Expect(env.Client.Get(ctx, untouched.keptKey, &kept)).To(Succeed())
	g.Expect(string(kept.UID)).To(Equal(untouched.keptUID), "the other application's kept password stays")
	g.Expect(env.Client.Get(ctx, untouched.platformSecret, &corev1.Secret{})).To(Succeed())

	families, err := testenv.Scrape(credentialController(g).MetricsAddr)
	g.Expect(err).NotTo(HaveOccurred())
	swept := func(ns, reason string) float64 {
		return testenv.ScrapedCounter(families, "credo_credential_records_swept_total", map[string]string{"namespace": ns, "reason": reason})
	}
	// The start-up sweep runs before the namespace is gone: it still
	// exists, Terminating, but its release was deleted with its content,
	// so the kept password is swept as ReleaseDeleted (NamespaceDeleted
	// only if the namespace went first).
	byNamespace, byRelease := swept(deleted.ns, metrics.SweptNamespaceDeleted), swept(deleted.ns, metrics.SweptReleaseDeleted)
	t.Logf("swept for the deleted namespace: %v as %s, %v as %s",
		byNamespace, metrics.SweptNamespaceDeleted, byRelease, metrics.SweptReleaseDeleted)
	g.Expect(byNamespace+byRelease).To(BeNumerically(">=", 1), "the deleted namespace's sweep is counted")
	g.Expect(swept(releaseGone.ns, metrics.SweptReleaseDeleted)).To(BeNumerically(">=", 1))

	logs, err := os.ReadFile(credentialController(g).Process.LogPath())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(logs)).To(ContainSubstring("deleted a kept platform password"), "the log scan sees the sweep's lines")
	for i, app := range []*application{deleted, releaseGone, untouched} {
		g.Expect(app.keptPassword).NotTo(BeEmpty())
		g.Expect(strings.Contains(string(logs), app.keptPassword)).To(BeFalse(), "kept password %d leaked into a log line", i)
	}
}
