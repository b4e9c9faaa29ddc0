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

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

const glanceNamespace = "glance"

// glanceObjects creates, in glanceNamespace, one object of each kind the
// summary shows, with the status their controllers would write.
func glanceObjects(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	now := time.Now()
	timeAt := func(d time.Duration) *metav1.Time { m := metav1.NewTime(now.Add(d).Truncate(time.Second)); return &m }
	readyTrue := func(msg string) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: msg, LastTransitionTime: metav1.NewTime(now)}}
	}
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: glanceNamespace}})).To(Succeed())
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: glanceNamespace} }

	anchor := &trustv1.TrustAnchor{ObjectMeta: meta("pg"), Spec: trustv1.TrustAnchorSpec{Release: "pg", Source: trustv1.SecretKeySource{Name: "pg-ca"}}}
	g.Expect(c.Create(ctx, anchor)).To(Succeed())
	anchor.Status = trustv1.TrustAnchorStatus{Leg: trustv1.LegTrustSource, NotAfter: timeAt(30 * 24 * time.Hour), Conditions: readyTrue("CA certificate projected")}
	g.Expect(c.Status().Update(ctx, anchor)).To(Succeed())
	g.Expect(c.Create(ctx, &trustv1.TrustAnchor{ObjectMeta: meta("search"), Spec: trustv1.TrustAnchorSpec{Release: "search", Source: trustv1.SecretKeySource{Name: "search-ca"}, Suspend: true}})).To(Succeed())

	acct := &credv1.CredentialAccount{ObjectMeta: meta("pg-app"), Spec: credv1.CredentialAccountSpec{Release: "pg", Username: "app", Format: credv1.Format{Name: "scram-sha-256"}, Suspend: true}}
	g.Expect(c.Create(ctx, acct)).To(Succeed())
	acct.Status = credv1.CredentialAccountStatus{Origin: credv1.OriginMinted, LastChange: timeAt(-5 * time.Minute), Conditions: append(readyTrue("account Secret is in place"),
		metav1.Condition{Type: credv1.AppliedCondition, Status: metav1.ConditionUnknown, Reason: credv1.RolePendingReason, Message: "Cluster pg has not reported role app reconciled", LastTransitionTime: metav1.Now()}),
		History: []credv1.Operation{{Operation: credv1.OriginMinted, At: *timeAt(-5 * time.Minute), By: "jane"}}}
	g.Expect(c.Status().Update(ctx, acct)).To(Succeed())

	wl := &enrollv1.Workload{ObjectMeta: meta("3f1c2b8e-0000-4000-8000-000000000001"), Spec: enrollv1.WorkloadSpec{Policy: "web", Token: "usable", Hostname: "vm-1.example.org"}}
	g.Expect(c.Create(ctx, wl)).To(Succeed())
	wl.Status = enrollv1.WorkloadStatus{Serial: "aa78dd39", NotBefore: timeAt(-4 * time.Hour), NotAfter: timeAt(20 * time.Hour), RenewAfter: timeAt(12 * time.Hour),
		Conditions: readyTrue("enrolled; certificate issued")}
	g.Expect(c.Status().Update(ctx, wl)).To(Succeed())

	for id, spec := range map[string]enrollv1.JoinTokenSpec{
		"usable":  {ExpiresAt: *timeAt(10 * time.Hour), Description: "web VMs, batch 7"},
		"revoked": {ExpiresAt: *timeAt(10 * time.Hour), Revoked: true},
		"expired": {ExpiresAt: *timeAt(-time.Hour)},
	} {
		spec.Policy, spec.SecretHash = "web", "sha256:"+strings.Repeat("ab", 32)
		g.Expect(c.Create(ctx, &enrollv1.JoinToken{ObjectMeta: meta(id), Spec: spec})).To(Succeed())
	}
}

// userKubeconfig writes the kubeconfig of a user bound, in glanceNamespace,
// to a Role with rules.
func userKubeconfig(ctx context.Context, t *testing.T, env *controlplane.Environment, user string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	g := NewWithT(t)
	path, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: glanceNamespace}, Rules: rules})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: glanceNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	return path
}

// kubectlCredo runs the plugin as the user of kubeconfig, in glanceNamespace.
func kubectlCredo(kubeconfig string, args ...string) (string, error) {
	return plugin(kubeconfig, append(args, "-n", glanceNamespace)...)
}

// On the real API server, through the aggregated access API, with the
// users' own credentials: every section the user may read is shown, every
// other one says so in one line, and the command succeeds.
func TestGetSummarisesANamespaceWithTheUsersRights(t *testing.T) {
	env := controlPlane(t)
	ctx := context.Background()
	g := NewWithT(t)
	glanceObjects(ctx, t, env.Client)

	// jane may read everything but the trust anchors; bob only them.
	jane := userKubeconfig(ctx, t, env, "jane", []rbacv1.PolicyRule{
		{APIGroups: []string{"access.credo.dev"}, Resources: []string{"accounts"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"enrollment.credo.dev"}, Resources: []string{"workloads", "jointokens"}, Verbs: []string{"list"}},
	})
	bob := userKubeconfig(ctx, t, env, "bob", []rbacv1.PolicyRule{
		{APIGroups: []string{"trust.credo.dev"}, Resources: []string{"trustanchors"}, Verbs: []string{"list"}},
	})
	anchors := `(?m)^Trust anchors in glance:\nNAME\s+SOURCE\s+LEG\s+EXPIRES\s+SUSPENDED\s+READY\s+STATUS\nsearch\s+search-ca\s+-\s+-\s+True\s+-\s+-\npg\s+pg-ca\s+TrustSource\s+in (29|30)d\s+False\s+True\s+CA certificate projected$`
	accounts := `(?m)^Accounts in glance:\nNAME\s+RELEASE\s+USERNAME\s+OWNER\s+ORIGIN\s+LAST CHANGE\s+BY\s+APPLIED\s+SUSPENDED\s+READY\s+STATUS\npg-app\s+pg\s+app\s+tenant\s+Minted\s+5m\d*s? ago\s+jane\s+Unknown/RolePending\s+True\s+True\s+account Secret is in place$`
	workloads := `(?m)^Workloads in glance:\nNAME\s+HOSTNAME\s+POLICY\s+RENEWAL DUE\s+EXPIRES\s+READY\s+STATUS\n3f1c2b8e-0000-4000-8000-000000000001\s+vm-1.example.org\s+web\s+in 1[12]h\s+in (19|20)h\s+True\s+enrolled; certificate issued$`
	tokens := `(?m)^Join tokens that can still enroll in glance:\nID\s+POLICY\s+EXPIRES\s+USES\s+LAST USED\s+DESCRIPTION\nusable\s+web\s+in (9|10)h\s+0\s+-\s+web VMs, batch 7\n\(and 2 revoked or expired: kubectl credo token list -n glance\)$`

	out, err := kubectlCredo(env.Kubeconfig, "get")
	g.Expect(err).NotTo(HaveOccurred(), out)
	for _, section := range []string{anchors, accounts, workloads, tokens} {
		g.Expect(out).To(MatchRegexp(section))
	}

	out, err = kubectlCredo(jane, "get")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("Trust anchors in glance: not shown: you may not list trustanchors.trust.credo.dev in glance (forbidden by RBAC)\n"))
	for _, section := range []string{accounts, workloads, tokens} {
		g.Expect(out).To(MatchRegexp(section))
	}

	out, err = kubectlCredo(bob, "get")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(MatchRegexp(anchors))
	for _, line := range []string{
		"Accounts in glance: not shown: you may not list accounts.access.credo.dev in glance (forbidden by RBAC)\n",
		"Workloads in glance: not shown: you may not list workloads.enrollment.credo.dev in glance (forbidden by RBAC)\n",
		"Join tokens that can still enroll in glance: not shown: you may not list jointokens.enrollment.credo.dev in glance (forbidden by RBAC)\n",
	} {
		g.Expect(out).To(ContainSubstring(line))
	}
	g.Expect(out).NotTo(ContainSubstring(strings.Repeat("ab", 32)))

	// One account, as before the summary.
	out, err = kubectlCredo(jane, "get", "pg-app")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(MatchRegexp(`^NAME\s+RELEASE\s+USERNAME\s+OWNER\s+ORIGIN\s+SECRET VERSION\s+LAST OPERATION\npg-app\s+pg\s+app\s+tenant\s+Minted\s+-\s+Minted by jane at \S+Z\n$`))
	_, err = kubectlCredo(bob, "get", "pg-app")
	g.Expect(err).To(MatchError(ContainSubstring("forbidden")))
}
