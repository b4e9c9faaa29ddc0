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
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

// Tests of what a tenant can do to a platform AccountSource: opt its
// releases in (labels, chart names, chartRefs and values are its to
// write), but not make the source not Ready, nor put its text in the
// source's status.

// platformArtifact is a chartRef to the platform's ExternalArtifact of the
// postgres application, as the platform's application releases carry.
var platformArtifact = helmv2.CrossNamespaceSourceReference{Kind: releasev1.ExternalArtifactKind, Name: "postgres", Namespace: testSourceNamespace}

// sourceStatusNamesNone fails g when the status of src holds any of texts.
func sourceStatusNamesNone(g Gomega, src *credv1.AccountSource, texts ...string) {
	raw, err := json.Marshal(src.Status)
	g.Expect(err).NotTo(HaveOccurred())
	for _, text := range texts {
		g.Expect(string(raw)).NotTo(ContainSubstring(text), "the status of cluster-scoped AccountSource %s holds a tenant's text", src.Name)
	}
}

// sourceNotApplied waits until the source is Ready (Succeeded) and its
// ReleasesNotApplied has reason ("" for none), and returns it.
func sourceNotApplied(g Gomega, src *credv1.AccountSource, reason string) *credv1.AccountSource {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(src), src)).To(Succeed())
		g.Expect(src.Status.ObservedGeneration).To(Equal(src.Generation))
		g.Expect(conditions.GetReason(src, meta.ReadyCondition)).To(Equal(meta.SucceededReason))
		g.Expect(conditions.IsReady(src)).To(BeTrue())
		if reason == "" {
			g.Expect(conditions.Get(src, credv1.ReleasesNotAppliedCondition)).To(BeNil())
			return
		}
		g.Expect(conditions.IsTrue(src, credv1.ReleasesNotAppliedCondition)).To(BeTrue())
		g.Expect(conditions.GetReason(src, credv1.ReleasesNotAppliedCondition)).To(Equal(reason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return src
}

// setValuesAs writes the values of the release ns/name as c.
func setValuesAs(g Gomega, c client.Client, ns, name, values string) {
	g.Eventually(func() error {
		hr := &helmv2.HelmRelease{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			return err
		}
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
		return c.Update(context.Background(), hr)
	}).Should(Succeed())
}

// accountNamesOf lists the names of the accounts a source generated in ns.
func accountNamesOf(g Gomega, ns, source string) []string {
	var list credv1.CredentialAccountList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{credv1.SourceLabel: source})).To(Succeed())
	var out []string
	for _, a := range list.Items {
		if a.DeletionTimestamp.IsZero() {
			out = append(out, a.Name)
		}
	}
	sort.Strings(out)
	return out
}

// A tenant's values key that the source refuses is told to the tenant's
// release, with its text; the AccountSource stays Ready, counts the release
// in ReleasesNotApplied, and its status holds none of the tenant's text.
func TestATenantsBadUsersKeyIsToldToItsReleaseAndLeavesTheSourceReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	src := newPostgresUsersSource(t, "users-"+ns, ns)
	long := strings.Repeat("k", 129)
	hr := testenv.TenantRelease(ns, "db", platformArtifact, map[string]string{"app": ns},
		`{"users":{"app":{},"Postgres":{},"`+long+`":{}}}`)
	g.Expect(tenant.Create(ctx, hr)).To(Succeed())

	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"app", "postgres"}))
	src = sourceNotApplied(g, src, credv1.UsernameRefusedReason)
	ev := env.ReleaseWarning(g, hr, credv1.UsernameRefusedReason)
	g.Expect(ev.Message).To(And(HavePrefix("AccountSource "+src.Name+": "),
		ContainSubstring(`username "Postgres" (sources[0]) maps to Secret db.postgres.account of username "postgres" (sources[1], owned by the platform)`),
		ContainSubstring("a username has 1 to 128 characters")))
	g.Consistently(func(g Gomega) {
		sourceNotApplied(g, src, credv1.UsernameRefusedReason)
		sourceStatusNamesNone(g, src, ns, "Postgres", "kkkk", "db.postgres")
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(conditions.GetMessage(src, meta.ReadyCondition)).To(Equal("2 account(s) for 1 release(s); some releases are not applied in full (ReleasesNotApplied)"))
	g.Expect(conditions.GetMessage(src, credv1.ReleasesNotAppliedCondition)).To(HavePrefix("1 release(s) not applied in full (UsernameRefused 1)"))

	// The tenant fixes its values: nothing is left to count.
	setValuesAs(g, tenant, ns, "db", `{"users":{"app":{}}}`)
	sourceNotApplied(g, src, "")
	g.Expect(env.WarningCount(g, ns, helmv2.HelmReleaseKind, "db", credv1.UsernameRefusedReason)).To(BeEquivalentTo(1),
		"told once, not on every reconcile of the source")
}

// An AccountSource's chartRef without a namespace names the platform's
// source: a tenant's own OCIRepository of that name does not reach it (no
// platform account, no kept password for it); the tenant's
// cross-namespace reference to the platform's OCIRepository does.
func TestATenantsOwnSourceDoesNotReachAChartRefSourceWithoutANamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tenant := env.Tenant(t, ns)
	repo := "pg-" + ns
	src := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "ref-" + ns},
		Spec: credv1.AccountSourceSpec{
			ChartRef: &releasev1.ChartRef{Kind: releasev1.OCIRepositoryKind, Name: repo},
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "postgres"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}, Owner: credv1.OwnerPlatform}}},
		},
	}
	g.Expect(env.Client.Create(ctx, src)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), src) })
	env.NewOCIRepository(t, testSourceNamespace, repo, "oci://ghcr.io/cozystack/charts/postgres")

	g.Expect(tenant.Create(ctx, &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: repo, Namespace: ns},
		Spec:       sourcev1.OCIRepositorySpec{URL: "oci://registry.tenant.example/charts/postgres", Interval: metav1.Duration{Duration: time.Hour}},
	})).To(Succeed())
	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "own",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.OCIRepositoryKind, Name: repo}, nil, ""))).To(Succeed())
	g.Expect(tenant.Create(ctx, testenv.TenantRelease(ns, "shared",
		helmv2.CrossNamespaceSourceReference{Kind: releasev1.OCIRepositoryKind, Name: repo, Namespace: testSourceNamespace}, nil, ""))).To(Succeed())

	g.Eventually(func() []string { return accountNamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"shared-postgres"}))
	g.Consistently(func() []string { return accountNamesOf(g, ns, src.Name) }, 3*time.Second, 200*time.Millisecond).
		Should(Equal([]string{"shared-postgres"}), "a source outside the platform's source namespaces is not the source's")
	sourceNotApplied(g, src, "")
}
