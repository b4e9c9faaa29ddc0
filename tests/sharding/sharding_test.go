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

package sharding

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

const (
	tenant            = "tenant-shards"
	platformNamespace = "credo-system"
	labelDomain       = "internal.cozystack.io"
	pendingTimeout    = 3 * time.Second
	// accountSource is the cluster-scoped rule every shard applies; shard1
	// keeps its status.
	accountSource = "admins"
	timeout       = 2 * time.Minute
)

// A unit is what the test creates for one name u, all labelled with one
// shard: HelmRelease u with a CA source Secret u-ca (a TrustAnchor u and a
// projection u.tenant-ca follow), a declared CredentialAccount u-app (and
// a generated u-admin), an EnrollmentPolicy u and pending Workloads u-wl-N.
// Every object a shard writes for it is named u, u-* or u.*.

// TestTwoShardsNeverBothActOnOneObject runs shard1 and shard2 of the
// trust-, credential- and enrollment-controller as processes, each shard
// as its own user, over units labelled shard1 and shard2, some created
// before the shards start and some while they run, then moves one unit
// from shard1 to shard2. kube-apiserver's audit log shows every write of
// every shard: each unit's objects are written by its shard alone; once a
// unit moves, its old shard writes nothing of it but the hand-over of its
// labels, and its new shard does the rest.
func TestTwoShardsNeverBothActOnOneObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bin := buildControllers(t)
	// Stopped by a cleanup, not a defer: the shards' logs are shown
	// (startShard's cleanups, which run first) before the environment's
	// directory goes.
	env := testenv.ControlPlane(t, controlplane.Options{NoControllerManager: true, Audit: true, AuditPolicy: auditPolicy})
	c := env.Client
	for _, ns := range []string{tenant, platformNamespace} {
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	// After the platform namespace: the enrollment-controller's Role lives there.
	kubeconfigs := grantShardRBAC(ctx, t, env, "shard1", "shard2")
	g.Expect(c.Create(ctx, &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: accountSource, Labels: map[string]string{shard.Key: "shard1"}},
		Spec: credv1.AccountSourceSpec{Chart: "db", Sources: []credv1.AccountSourceEntry{{
			Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "admin"},
			Template: credv1.AccountTemplate{Format: credv1.Format{Name: "sha256-hex"}},
		}}},
	})).To(Succeed())

	// Units one and two exist before the shards start.
	createUnit(ctx, t, c, "one", "shard1")
	createUnit(ctx, t, c, "two", "shard2")
	startShard(ctx, t, env, bin, "shard1", kubeconfigs["shard1"])
	startShard(ctx, t, env, bin, "shard2", kubeconfigs["shard2"])
	waitUnit(ctx, g, c, "one", "shard1")
	waitUnit(ctx, g, c, "two", "shard2")

	// Units three and four, and a pending Workload of every policy, are
	// created while both shards run.
	createUnit(ctx, t, c, "three", "shard1")
	createUnit(ctx, t, c, "four", "shard2")
	waitUnit(ctx, g, c, "three", "shard1")
	waitUnit(ctx, g, c, "four", "shard2")
	for _, u := range []string{"one", "two", "three", "four"} {
		createPendingWorkload(ctx, t, c, u+"-wl-1", u)
	}
	for _, u := range []string{"one", "two", "three", "four"} {
		waitGone(ctx, g, c, &enrollv1.Workload{}, u+"-wl-1")
	}
	// The AccountSource's status, kept by shard1, counts shard1's releases.
	g.Eventually(func(g Gomega) {
		var src credv1.AccountSource
		g.Expect(c.Get(ctx, client.ObjectKey{Name: accountSource}, &src)).To(Succeed())
		g.Expect(conditions.IsReady(&src)).To(BeTrue())
		g.Expect(src.Status.MatchedReleases).To(BeEquivalentTo(2))
	}, timeout, time.Second).Should(Succeed())

	owners := map[string]string{"one": "shard1", "two": "shard2", "three": "shard1", "four": "shard2", accountSource: "shard1"}
	writes, seen := auditWrites(t, env.AuditLogPath, 0, "shard1", "shard2")
	checkWrites(t, writes, owners, nil)
	for _, u := range []string{"one", "two", "three", "four"} {
		expectActed(t, writes, owners[u], u)
	}

	// Release one and policy one move to shard2.
	relabel(ctx, t, c, &helmv2.HelmRelease{}, "one", "shard2")
	relabel(ctx, t, c, &enrollv1.EnrollmentPolicy{}, "one", "shard2")
	waitLabel(ctx, g, c, &trustv1.TrustAnchor{}, "one", "shard2")
	waitLabel(ctx, g, c, &credv1.CredentialAccount{}, "one-app", "shard2")
	waitLabel(ctx, g, c, &credv1.CredentialAccount{}, "one-admin", "shard2")
	// Then the unit changes: its CA rotates, its account is asked to
	// reconcile, a workload registers under its policy.
	rotated, _ := testpki.CA(t, "one-rotated")
	patchSecretData(ctx, t, c, "one-ca", rotated)
	requestReconcile(ctx, t, c, "one-app", "after-the-move")
	createPendingWorkload(ctx, t, c, "one-wl-2", "one")
	g.Eventually(func(g Gomega) {
		var ta trustv1.TrustAnchor
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "one"}, &ta)).To(Succeed())
		g.Expect(ta.Status.Certificates).NotTo(BeEmpty())
		g.Expect(ta.Status.Certificates[0].Subject).To(ContainSubstring("one-rotated"))
		var p corev1.Secret
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "one" + trustv1.ProjectionSuffix}, &p)).To(Succeed())
		g.Expect(bytes.Contains(p.Data["ca.crt"], bytes.TrimSpace(rotated))).To(BeTrue())
		var a credv1.CredentialAccount
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "one-app"}, &a)).To(Succeed())
		g.Expect(a.Status.LastHandledReconcileAt).To(Equal("after-the-move"))
	}, timeout, time.Second).Should(Succeed())
	waitGone(ctx, g, c, &enrollv1.Workload{}, "one-wl-2")

	owners["one"] = "shard2"
	moved, _ := auditWrites(t, env.AuditLogPath, seen, "shard1", "shard2")
	checkWrites(t, moved, owners, map[string]bool{"one": true})

	expectActed(t, moved, "shard2", "one")
}

// checkWrites fails the test for every write a shard made on an object that
// is not its own. movedUnits may also receive their hand-over (a patch of
// their labels alone) from their previous shard. The enrollment CA is the
// one object every shard shares; Events are not objects of a unit.
func checkWrites(t *testing.T, writes []write, owners map[string]string, movedUnits map[string]bool) {
	t.Helper()
	if len(writes) == 0 {
		t.Fatal("the audit log holds no write of any shard")
	}
	perUser := map[string]int{}
	for _, w := range writes {
		perUser[w.User]++
	}
	t.Logf("writes per shard: %v", perUser)
	for _, w := range writes {
		switch {
		case w.Resource == "events":
			continue
		case w.Resource == "secrets" && w.Namespace == platformNamespace && w.Name == embedded.DefaultSecretName:
			continue
		case w.Resource == "trustanchors" && w.Namespace == platformNamespace && w.Name == embedded.DefaultRelease:
			// The platform's enrollment CA and its anchor belong to no
			// unit: every shard's enrollment-controller declares the same
			// anchor (one field manager, the same content), as each keeps
			// the same CA Secret.
			continue
		}
		unit := unitOf(w.Name)
		owner, ok := owners[unit]
		if !ok || (w.Namespace != tenant && !(w.Resource == "accountsources" && w.Namespace == "")) {
			t.Errorf("a write of no unit: %s", w)
			continue
		}
		if w.User == owner {
			continue
		}
		if movedUnits[unit] && w.labelsOnly() {
			t.Logf("hand-over: %s %s", w, w.Body)
			continue
		}
		t.Errorf("%s wrote an object of %s, which %s serves: %s", w.User, unit, owner, w)
	}
}

// expectActed fails the test unless user wrote the status of unit u's
// TrustAnchor, its projection, its account's status and its policy's
// status, and deleted one of its pending Workloads.
func expectActed(t *testing.T, writes []write, user, u string) {
	t.Helper()
	want := []struct{ verbs, resource, sub, name string }{
		{"patch", "trustanchors", "status", u},
		{"create update patch", "secrets", "", u + trustv1.ProjectionSuffix},
		{"patch", "credentialaccounts", "status", u + "-app"},
		{"patch", "enrollmentpolicies", "status", u},
		{"delete", "workloads", "", ""},
	}
	for _, w := range want {
		found := false
		for _, got := range writes {
			if got.User == user && slices.Contains(strings.Fields(w.verbs), got.Verb) && got.Resource == w.resource &&
				got.Subresource == w.sub && unitOf(got.Name) == u && (w.name == "" || got.Name == w.name) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s never did %s %s/%s of %s", user, w.verbs, w.resource, w.sub, u)
		}
	}
}

func createUnit(ctx context.Context, t *testing.T, c client.Client, u, shardName string) {
	t.Helper()
	g := NewWithT(t)
	l := map[string]string{shard.Key: shardName}
	g.Expect(c.Create(ctx, &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: u, Namespace: tenant, Labels: l},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "db",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "apps"}}}},
	})).To(Succeed())
	cert, _ := testpki.CA(t, u)
	g.Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: u + "-ca", Namespace: tenant, Labels: map[string]string{
			labelDomain + "/publish-ca-cert": "true", labelDomain + "/publish-ca-cert-release": u}},
		Data: map[string][]byte{"ca.crt": cert},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: u + "-app", Namespace: tenant, Labels: l},
		Spec:       credv1.CredentialAccountSpec{Release: u, Username: "app", Format: credv1.Format{Name: "sha256-hex"}},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Name: u, Namespace: tenant, Labels: l}})).To(Succeed())
}

// waitUnit waits until the unit's anchor, accounts and policy are Ready,
// the ones credo created labelled with the unit's shard.
func waitUnit(ctx context.Context, g Gomega, c client.Client, u, shardName string) {
	g.Eventually(func(g Gomega) {
		for _, o := range []struct {
			obj  client.Object
			name string
		}{
			{&trustv1.TrustAnchor{}, u}, {&credv1.CredentialAccount{}, u + "-app"},
			{&credv1.CredentialAccount{}, u + "-admin"}, {&enrollv1.EnrollmentPolicy{}, u},
		} {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: o.name}, o.obj)).To(Succeed())
			g.Expect(o.obj.GetLabels()).To(HaveKeyWithValue(shard.Key, shardName), "%T %s", o.obj, o.name)
			getter, ok := o.obj.(conditions.Getter)
			g.Expect(ok).To(BeTrue())
			g.Expect(conditions.IsReady(getter)).To(BeTrue(), "%T %s: %v", o.obj, o.name, getter.GetConditions())
		}
	}, timeout, time.Second).Should(Succeed())
}

func waitLabel(ctx context.Context, g Gomega, c client.Client, obj client.Object, name, shardName string) {
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: name}, obj)).To(Succeed())
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue(shard.Key, shardName))
	}, timeout, time.Second).Should(Succeed(), "%T %s moves to %s", obj, name, shardName)
}

func waitGone(ctx context.Context, g Gomega, c client.Client, obj client.Object, name string) {
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: name}, obj))
	}, timeout, 500*time.Millisecond).Should(BeTrue(), "%T %s is deleted", obj, name)
}

func createPendingWorkload(ctx context.Context, t *testing.T, c client.Client, name, policy string) {
	t.Helper()
	NewWithT(t).Expect(c.Create(ctx, &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant},
		Spec:       enrollv1.WorkloadSpec{Policy: policy, Token: "tok-" + policy},
	})).To(Succeed())
}

func relabel(ctx context.Context, t *testing.T, c client.Client, obj client.Object, name, shardName string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: name}, obj)).To(Succeed())
	before, ok := obj.DeepCopyObject().(client.Object)
	g.Expect(ok).To(BeTrue())
	l := obj.GetLabels()
	l[shard.Key] = shardName
	obj.SetLabels(l)
	g.Expect(c.Patch(ctx, obj, client.MergeFrom(before))).To(Succeed())
}

func patchSecretData(ctx context.Context, t *testing.T, c client.Client, name string, cert []byte) {
	t.Helper()
	g := NewWithT(t)
	var s corev1.Secret
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: name}, &s)).To(Succeed())
	before := s.DeepCopy()
	s.Data["ca.crt"] = cert
	g.Expect(c.Patch(ctx, &s, client.MergeFrom(before))).To(Succeed())
}

func requestReconcile(ctx context.Context, t *testing.T, c client.Client, account, token string) {
	t.Helper()
	g := NewWithT(t)
	var a credv1.CredentialAccount
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: account}, &a)).To(Succeed())
	before := a.DeepCopy()
	metav1.SetMetaDataAnnotation(&a.ObjectMeta, meta.ReconcileRequestAnnotation, token)
	g.Expect(c.Patch(ctx, &a, client.MergeFrom(before))).To(Succeed())
}
