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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/controlplane"
)

const columnsNamespace = "columns"

// readyPatch sets only status.conditions, as the controllers' patches do:
// a count they leave at zero is never written.
var readyPatch = client.RawPatch(types.MergePatchType, []byte(
	`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Succeeded","message":"all good","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`))

// columnsObjects creates one object of each of credo's seven kinds, each
// with a Ready condition.
func columnsObjects(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: columnsNamespace}})).To(Succeed())
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: columnsNamespace} }
	format := credv1.Format{Name: "scram-sha-256"}
	withReady := []client.Object{
		&trustv1.TrustAnchor{ObjectMeta: meta("pg"), Spec: trustv1.TrustAnchorSpec{Release: "pg", Source: trustv1.SecretKeySource{Name: "pg-ca"}}},
		&trustv1.TrustSource{ObjectMeta: metav1.ObjectMeta{Name: "columns-rule"}, Spec: trustv1.TrustSourceSpec{Chart: "postgres", SecretName: "{release}-ca"}},
		&credv1.CredentialAccount{ObjectMeta: meta("pg-app"), Spec: credv1.CredentialAccountSpec{Release: "pg", Username: "app", Format: format}},
		&credv1.AccountSource{ObjectMeta: metav1.ObjectMeta{Name: "columns-users"}, Spec: credv1.AccountSourceSpec{Chart: "postgres",
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"}, Template: credv1.AccountTemplate{Format: format}}}}},
		&enrollv1.EnrollmentPolicy{ObjectMeta: meta("web")},
		&enrollv1.Workload{ObjectMeta: meta("3f1c2b8e-0000-4000-8000-000000000002"), Spec: enrollv1.WorkloadSpec{Policy: "web", Token: "t1", Hostname: "vm-1"}},
	}
	for _, obj := range withReady {
		g.Expect(c.Create(ctx, obj)).To(Succeed())
		g.Expect(c.Status().Patch(ctx, obj, readyPatch)).To(Succeed())
	}
	jt := &enrollv1.JoinToken{ObjectMeta: meta("t1"), Spec: enrollv1.JoinTokenSpec{
		Policy: "web", SecretHash: "sha256:" + strings.Repeat("cd", 32), ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour)),
	}}
	g.Expect(c.Create(ctx, jt)).To(Succeed())
	g.Expect(c.Status().Patch(ctx, jt, readyPatch)).To(Succeed())
}

// kubectl runs the control plane's kubectl as system:masters.
func kubectl(t *testing.T, env *controlplane.Environment, args ...string) string {
	t.Helper()
	assets, err := controlplane.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", env.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// What `kubectl get` prints of each kind, by its short name, as rendered by
// the real API server: Age, Ready and the Ready message last, so that a long
// message pushes no other column; details only with -o wide; counts 0, not
// blank, when the controller never wrote them.
func TestKubectlGetColumnsOfEveryKind(t *testing.T) {
	env := controlPlane(t)
	columnsObjects(context.Background(), t, env.Client)
	cases := []struct {
		short, header, wide, row string
	}{
		{"ta", "NAME SOURCE LEG EXPIRES AGE READY STATUS", "NAME SOURCE LEG EXPIRES FINGERPRINT LAST ROTATION AGE READY STATUS",
			`pg\s+pg-ca\s+\S+\s+True\s+all good`},
		{"ts", "NAME CHART SECRET RELEASES AGE READY STATUS", "NAME CHART SECRET RELEASES KEY AGE READY STATUS",
			`columns-rule\s+postgres\s+\{release\}-ca\s+0\s+\S+\s+True\s+all good`},
		{"cacct", "NAME RELEASE USERNAME OWNER ORIGIN LAST CHANGE AGE READY STATUS", "NAME RELEASE USERNAME FORMAT OWNER ORIGIN LAST CHANGE AGE READY STATUS APPLIED APPLIED REASON",
			`pg-app\s+pg\s+app\s+tenant\s+\S+\s+True\s+all good`},
		{"asrc", "NAME CHART RELEASES ACCOUNTS AGE READY STATUS", "NAME CHART RELEASES ACCOUNTS AGE READY STATUS",
			`columns-users\s+postgres\s+0\s+0\s+\S+\s+True\s+all good`},
		{"epol", "NAME TOKENS WORKLOADS AGE READY STATUS", "NAME TOKENS WORKLOADS TTL REVOKED ON DUPLICATE AGE READY STATUS",
			`web\s+0\s+0\s+\S+\s+True\s+all good`},
		{"jt", "NAME POLICY EXPIRES REVOKED USES LAST USED AGE READY STATUS", "NAME POLICY EXPIRES REVOKED USES LAST USED CREATED BY DESCRIPTION AGE READY STATUS",
			`t1\s+web\s+20\d\d-\d\d-\d\dT\S+Z\s+0\s+\S+\s+True\s+all good`},
		{"wl", "NAME HOSTNAME POLICY EXPIRES RENEW AFTER AGE READY STATUS", "NAME HOSTNAME POLICY EXPIRES RENEW AFTER SERIAL RENEWALS URI DENIED AGE READY STATUS",
			`3f1c2b8e-0000-4000-8000-000000000002\s+vm-1\s+web\s+\S+\s+True\s+all good`},
	}
	spaced := func(header string) string { return strings.Join(strings.Fields(header), " ") }
	for _, tc := range cases {
		t.Run(tc.short, func(t *testing.T) {
			g := NewWithT(t)
			lines := strings.Split(strings.TrimSpace(kubectl(t, env, "get", tc.short, "-n", columnsNamespace)), "\n")
			g.Expect(lines).To(HaveLen(2), "a header and the one object")
			g.Expect(spaced(lines[0])).To(Equal(tc.header))
			g.Expect(tc.header).To(HaveSuffix(" AGE READY STATUS"), "every kind's columns end with Age, Ready, Status")
			g.Expect(tc.wide).To(Or(HaveSuffix(" AGE READY STATUS"), HaveSuffix(" AGE READY STATUS APPLIED APPLIED REASON")),
				"with -o wide, only the details of a second condition may follow")
			g.Expect(lines[1]).To(MatchRegexp(`^` + tc.row + `$`))
			wide := strings.SplitN(kubectl(t, env, "get", tc.short, "-n", columnsNamespace, "-o", "wide"), "\n", 2)
			g.Expect(spaced(wide[0])).To(Equal(tc.wide))
		})
	}

	// kubectl get credo-all lists every kind (the cluster-scoped ones
	// with -n too: kubectl ignores the namespace for them).
	names := kubectl(t, env, "get", "credo-all", "-n", columnsNamespace, "-o", "name")
	for _, kind := range []string{"trustanchor.trust", "trustsource.trust", "credentialaccount.credentials", "accountsource.credentials",
		"enrollmentpolicy.enrollment", "jointoken.enrollment", "workload.enrollment"} {
		NewWithT(t).Expect(names).To(MatchRegexp(`(?m)^` + regexp.QuoteMeta(kind) + `\.credo\.dev/`))
	}
}
