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

package credentials

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

// usernamesOf lists the usernames of the accounts a source generated for a release.
func usernamesOf(g Gomega, ns, source string) []string {
	var list credv1.CredentialAccountList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{credv1.SourceLabel: source})).To(Succeed())
	var out []string
	for _, a := range list.Items {
		if a.DeletionTimestamp.IsZero() {
			out = append(out, a.Spec.Username)
		}
	}
	sort.Strings(out)
	return out
}

func setValues(g Gomega, ns, name, values string) {
	ctx := context.Background()
	g.Eventually(func() error {
		hr := testenv.HelmReleaseObject(ns, name, "", nil)
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return err
		}
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
		return env.Client.Update(ctx, hr)
	}).Should(Succeed())
}

// newPostgresUsersSource creates the shipped sample's shape of AccountSource
// for the releases labelled app=<app>: a tenant account per key of
// users, and the platform account postgres.
func newPostgresUsersSource(t *testing.T, name, app string) *credv1.AccountSource {
	t.Helper()
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Sources: []credv1.AccountSourceEntry{
				{Kind: credv1.SourceValuesMap, ValuesMap: &credv1.ValuesMapSource{Path: "users"},
					Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}}},
				{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "postgres"},
					Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}, Owner: credv1.OwnerPlatform}},
			},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	return src
}

func TestValuesMapSourceAddsAndRemovesAccountsAsValuesChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	src := newPostgresUsersSource(t, "pg-"+ns, ns)
	hr := env.NewHelmRelease(t, ns, "pg", "postgres", map[string]string{"app": ns})
	setValues(g, ns, "pg", `{"users":{"alice":{},"bob":{"login":true}}}`)

	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"alice", "bob", "postgres"}))
	a := accountWith(g, ns, "pg-postgres", accountReady)
	g.Expect(a.Spec.Owner).To(Equal(credv1.OwnerPlatform))
	accountWith(g, ns, "pg-alice", accountReady)
	accountWith(g, ns, "pg-bob", accountReady)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg.bob.account"}, &corev1.Secret{})).To(Succeed())

	setValues(g, ns, "pg", `{"users":{"alice":{},"carol":{}}}`)
	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"alice", "carol", "postgres"}))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg.bob.account"}, &corev1.Secret{}))
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "a removed user's Secret goes with its account")

	// Unreadable values lose nothing: the map's accounts stay, and the
	// release is told.
	setValues(g, ns, "pg", `{"users":"not a map"}`)
	ev := env.ReleaseWarning(g, hr, credv1.InvalidValuesReason)
	g.Expect(ev.Message).To(ContainSubstring("spec.values.users: not a map (sources[0]); its accounts are kept as they are"))
	sourceNotApplied(g, src, credv1.InvalidValuesReason)
	g.Consistently(func() []string { return usernamesOf(g, ns, src.Name) }, 2*time.Second, 200*time.Millisecond).
		Should(Equal([]string{"alice", "carol", "postgres"}))
}

func TestUnbuiltSourceKindsAreRefused(t *testing.T) {
	hook := &credv1.WebhookSource{ClientConfig: credv1.WebhookClientConfig{
		Service: &credv1.WebhookService{Namespace: "naming", Name: "usernames"}}}
	for _, entry := range []credv1.AccountSourceEntry{
		{Kind: credv1.SourceWebhook, Webhook: hook},
	} {
		t.Run(string(entry.Kind), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			entry.Template = credv1.AccountTemplate{Format: credv1.Format{Name: "plaintext"}}
			src := &credv1.AccountSource{
				ObjectMeta: metav1.ObjectMeta{Name: "unbuilt-" + strings.ToLower(string(entry.Kind))},
				Spec:       credv1.AccountSourceSpec{Chart: "anything", Sources: []credv1.AccountSourceEntry{entry}},
			}
			g.Expect(env.Client.Create(ctx, src)).To(Succeed())
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
			ns := env.NewNamespace(t)
			env.NewHelmRelease(t, ns, "x", "anything", nil)
			g.Eventually(func() string {
				_ = env.Client.Get(ctx, client.ObjectKeyFromObject(src), src)
				return conditions.GetReason(src, meta.StalledCondition)
			}, 20*time.Second, 100*time.Millisecond).Should(Equal(credv1.UnsupportedSourceKindReason))
			g.Expect(conditions.GetMessage(src, meta.StalledCondition)).To(Equal(
				"sources[0]: source kind " + string(entry.Kind) + " is part of the API but not built yet; built: ValuesMap, Static"))
			g.Expect(usernamesOf(g, ns, src.Name)).To(BeEmpty())
		})
	}
	// Kinds that are not in the API at all (planned once, never built)
	// are refused by the API server: nothing can be stored with them.
	for _, kind := range []credv1.SourceKind{"ValuesList", "Expression"} {
		g := NewWithT(t)
		src := &credv1.AccountSource{
			ObjectMeta: metav1.ObjectMeta{Name: "unknown-" + strings.ToLower(string(kind))},
			Spec: credv1.AccountSourceSpec{Chart: "anything", Sources: []credv1.AccountSourceEntry{{Kind: kind,
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "plaintext"}}}}},
		}
		err := env.Client.Create(context.Background(), src)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "kind %s: %v", kind, err)
		g.Expect(err.Error()).To(ContainSubstring(`supported values: "ValuesMap", "Static", "Webhook"`))
	}
}

// One tenant's values cannot fail another's accounts: a refused key (too
// long for a username, or mapping to the Secret of another key) is reported
// and the rest of every release is derived.
func TestARefusedValuesKeyIsReportedAndTheOtherReleasesAreDerived(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "users-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": ns}},
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceValuesMap, ValuesMap: &credv1.ValuesMapSource{Path: "users"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "mysql-native"}}}},
		},
	}
	g.Expect(env.Client.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	long := strings.Repeat("x", 129)
	hr := env.NewHelmRelease(t, ns, "a", "mariadb", map[string]string{"app": ns})
	setValues(g, ns, "a", `{"users":{"App_User":{},"app.user":{},"`+long+`":{},"ok":{}}}`)
	env.NewHelmRelease(t, ns, "b", "mariadb", map[string]string{"app": ns})
	setValues(g, ns, "b", `{"users":{"x":{}}}`)

	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"App_User", "ok", "x"}))
	ev := env.ReleaseWarning(g, hr, credv1.UsernameRefusedReason)
	g.Expect(ev.Message).To(ContainSubstring(`username "app.user" (sources[0]) maps to Secret a.app-user.account of username "App_User"`))
	g.Expect(ev.Message).To(ContainSubstring("a username has 1 to 128 characters"))
	g.Eventually(func(g Gomega) {
		g.Expect(sourceNotApplied(g, src, credv1.UsernameRefusedReason).Status.Accounts).To(Equal(int32(3)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(env.WarningCount(g, ns, helmv2.HelmReleaseKind, "b", credv1.UsernameRefusedReason)).To(BeZero(), "b's values are fine")
	accountWith(g, ns, "a-app-user", accountReady)
	accountWith(g, ns, "b-x", accountReady)

	// A key added later that sorts first does not displace the account
	// already holding the name.
	setValues(g, ns, "a", `{"users":{"APP_USER":{},"App_User":{},"ok":{}}}`)
	g.Consistently(func() []string { return usernamesOf(g, ns, src.Name) }, 2*time.Second, 200*time.Millisecond).
		Should(Equal([]string{"App_User", "ok", "x"}))
}

// Two releases of a namespace can derive one account name ("pg" with the
// user "main-postgres", "pg-main" with its platform user "postgres"): the
// platform account gets it, whichever release comes first.
func TestAValuesKeyOfAnotherReleaseCannotSquatAPlatformAccountName(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	src := newPostgresUsersSource(t, "squat-"+ns, ns)
	hr := env.NewHelmRelease(t, ns, "pg", "postgres", map[string]string{"app": ns})
	setValues(g, ns, "pg", `{"users":{"main-postgres":{}}}`)
	env.NewHelmRelease(t, ns, "pg-main", "postgres", map[string]string{"app": ns})

	a := accountWith(g, ns, "pg-main-postgres", accountReady)
	g.Expect(a.Spec.Release).To(Equal("pg-main"))
	g.Expect(a.Spec.Owner).To(Equal(credv1.OwnerPlatform))
	ev := env.ReleaseWarning(g, hr, credv1.UsernameRefusedReason)
	// Made first, its account is deleted; derived after, it is not made.
	g.Expect(ev.Message).To(MatchRegexp(`username "main-postgres" has the account name pg-main-postgres of (a platform account of )?release pg-main`))
	sourceNotApplied(g, src, credv1.UsernameRefusedReason)
}

// A releaseSelector that cannot be parsed is said as such, not as an
// unsupported source kind.
func TestInvalidReleaseSelectorIsStalledAsSuch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "x", "anything", nil)
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-selector-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"not a key!": "x"}},
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "plaintext"}}}},
		},
	}
	g.Expect(env.Client.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	g.Eventually(func() string {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(src), src)
		return conditions.GetReason(src, meta.StalledCondition)
	}, 20*time.Second, 100*time.Millisecond).Should(Equal(credv1.InvalidSelectorReason))
}
