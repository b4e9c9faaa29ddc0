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
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

// usersValues is the values of a release with n users u00, u01, ...
func usersValues(n int) string {
	keys := make([]string, 0, n)
	for i := range n {
		keys = append(keys, fmt.Sprintf(`"u%02d":{}`, i))
	}
	return `{"users":{` + strings.Join(keys, ",") + `}}`
}

// keptPasswordsOf counts the passwords kept in the platform namespace for
// the platform accounts of namespace ns.
func keptPasswordsOf(g Gomega, ns string) int {
	ctx := context.Background()
	var nsObj corev1.Namespace
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &nsObj)).To(Succeed())
	var list corev1.SecretList
	g.Expect(env.Client.List(ctx, &list, client.InNamespace(testPlatformNamespace),
		client.MatchingLabels{testAccountKeys.NamespaceUID: string(nsObj.UID)})).To(Succeed())
	return len(list.Items)
}

// A tenant's values that derive more accounts than one release may have
// change nothing of the release's accounts: none is created, changed or
// deleted (all or none), and the release is told why; the source stays
// Ready and counts it, naming nothing of the tenant's.
func TestAReleaseOverTheAccountLimitGetsNoneOfItsNewAccounts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	src := newPostgresUsersSource(t, "limit-"+ns, ns)
	// 7 users and the platform's postgres: 8, the limit.
	hr := testenv.TenantRelease(ns, "db", platformArtifact, map[string]string{"app": ns}, usersValues(testMaxAccountsPerRelease-1))
	g.Expect(tenant.Create(ctx, hr)).To(Succeed())
	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(HaveLen(testMaxAccountsPerRelease))
	before := usernamesOf(g, ns, src.Name)
	sourceNotApplied(g, src, "")

	// 40 users, of which u00 to u06 are the release's already.
	setValuesAs(g, tenant, ns, "db", usersValues(40))
	g.Consistently(func() []string { return usernamesOf(g, ns, src.Name) }, 3*time.Second, 200*time.Millisecond).
		Should(Equal(before), "none of the release's accounts is created, changed or deleted")
	ev := env.ReleaseWarning(g, hr, credv1.AccountLimitExceededReason)
	g.Expect(ev.Message).To(ContainSubstring(fmt.Sprintf("it derives 41 accounts, more than the %d one release may have (--max-generated-accounts-per-release)",
		testMaxAccountsPerRelease)))
	src = sourceNotApplied(g, src, credv1.AccountLimitExceededReason)
	sourceStatusNamesNone(g, src, ns, "u07", "db-u")

	// Back within the limit, the release's accounts follow its values again.
	setValuesAs(g, tenant, ns, "db", `{"users":{"x":{}}}`)
	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"postgres", "x"}))
	sourceNotApplied(g, src, "")
}

// Releases a tenant labels for an AccountSource with a platform account,
// suspended so that nothing else of theirs runs, cannot pile passwords up
// in the platform namespace: past the namespace's limit of platform
// accounts, a release gets none of its accounts, and is told why.
func TestSuspendedReleasesCannotPileUpKeptPlatformPasswords(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	src := newPostgresUsersSource(t, "kept-"+ns, ns)
	var releases []*helmv2.HelmRelease
	for i := range testMaxPlatformAccountsPerNamespace + 1 {
		hr := testenv.TenantRelease(ns, fmt.Sprintf("db-%d", i), platformArtifact, map[string]string{"app": ns}, `{"users":{"app":{}}}`)
		hr.Spec.Suspend = true
		g.Expect(tenant.Create(ctx, hr)).To(Succeed())
		releases = append(releases, hr)
		if i < testMaxPlatformAccountsPerNamespace {
			// One by one: the first ones come first.
			accountWith(g, ns, hr.Name+"-postgres", accountReady)
		}
	}
	last := releases[testMaxPlatformAccountsPerNamespace]
	g.Consistently(func(g Gomega) {
		var list credv1.CredentialAccountList
		g.Expect(env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{credv1.ReleaseLabel: last.Name})).To(Succeed())
		g.Expect(list.Items).To(BeEmpty(), "none of its accounts, the tenant's app included")
		g.Expect(keptPasswordsOf(g, ns)).To(Equal(testMaxPlatformAccountsPerNamespace))
	}, 5*time.Second, 200*time.Millisecond).Should(Succeed())
	ev := env.ReleaseWarning(g, last, credv1.AccountLimitExceededReason)
	g.Expect(ev.Message).To(ContainSubstring(fmt.Sprintf("would take namespace %s to %d platform accounts, more than the %d a namespace may have",
		ns, testMaxPlatformAccountsPerNamespace+1, testMaxPlatformAccountsPerNamespace)))
	src = sourceNotApplied(g, src, credv1.AccountLimitExceededReason)
	g.Expect(conditions.GetMessage(src, credv1.ReleasesNotAppliedCondition)).To(HavePrefix("1 release(s) not applied in full (AccountLimitExceeded 1)"))
	sourceStatusNamesNone(g, src, ns, last.Name)

	// A release goes, and with it its platform account: there is room again.
	g.Expect(tenant.Delete(ctx, releases[0])).To(Succeed())
	accountWith(g, ns, last.Name+"-postgres", accountReady)
	accountWith(g, ns, last.Name+"-app", accountReady)
}

// A namespace's generated accounts are bounded across its releases: a
// release whose new accounts would take the namespace over the limit gets
// none of them.
func TestANamespaceOverItsAccountLimitGetsNoNewRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	src := newPostgresUsersSource(t, "ns-"+ns, ns)
	// Two releases of 7 users and a platform account each: 16, the limit.
	per := testMaxAccountsPerNamespace/2 - 1
	for _, name := range []string{"a", "b"} {
		g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, name, platformArtifact, map[string]string{"app": ns}, usersValues(per)))).To(Succeed())
	}
	g.Eventually(func() []string { return accountNamesOf(g, ns, src.Name) }, 30*time.Second, 100*time.Millisecond).
		Should(HaveLen(testMaxAccountsPerNamespace))

	c := testenv.TenantRelease(ns, "c", platformArtifact, map[string]string{"app": ns}, `{"users":{"app":{}}}`)
	g.Expect(tenant.Create(ctx, c)).To(Succeed())
	g.Consistently(func() []string { return accountNamesOf(g, ns, src.Name) }, 3*time.Second, 200*time.Millisecond).
		Should(HaveLen(testMaxAccountsPerNamespace), "none of c's accounts")
	ev := env.ReleaseWarning(g, c, credv1.AccountLimitExceededReason)
	g.Expect(ev.Message).To(ContainSubstring(fmt.Sprintf("its 2 new account(s) would take namespace %s to %d generated accounts, more than the %d",
		ns, testMaxAccountsPerNamespace+2, testMaxAccountsPerNamespace)))
	sourceNotApplied(g, src, credv1.AccountLimitExceededReason)
}

func TestTheLimitsDefaultAndCanBeLifted(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Options{}.limits()).To(Equal(Limits{PerRelease: 64, PerNamespace: 512, PlatformPerNamespace: 64}))
	g.Expect(Options{MaxAccountsPerRelease: -1, MaxAccountsPerNamespace: 10, MaxPlatformAccountsPerNamespace: -1}.limits()).
		To(Equal(Limits{PerNamespace: 10}))
}
