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
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// A workload's labels and hostname, which relying services authorize by,
// change without re-enrollment only by a holder of the verb relabel
// (ClusterRole credo-workload-relabeler, which the platform binds), in its
// own name, and never together with its denial (config/admission's
// credo-workload-attributes, in the default install):
//   - a namespace admin (built-in admin, with credo's and Flux's roles
//     aggregated: it may update Workloads, for spec.denied) may not change
//     them, nor the name of who did, and still denies in its own name;
//   - a tenant who may write its namespace's Secrets may not write
//     Workloads at all;
//   - a relabeler may, naming itself in spec.changedBy, but not naming
//     anybody else, and not while lifting (or adding) a denial.
func TestOnlyARelabelerChangesAWorkloadsAttributesInItsOwnName(t *testing.T) {
	admissionPolicy(t)
	fluxTenantRoles(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	bind(t, ns, "mallory", "admin")
	bind(t, ns, "rita", "admin")
	bind(t, ns, "rita", "credo-workload-relabeler")
	admin, relabeler := userClient(t, "mallory"), userClient(t, "rita")
	secrets := secretWriter(t, ns, "sam")

	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "6f1c6d7e-2b1a-4c3e-9f00-0a1b2c3d4e5f", Namespace: ns},
		Spec: enrollv1.WorkloadSpec{Policy: "web", Token: "tok123", Hostname: "vm-1.example.org",
			Labels: map[string]string{"role": "backend"}},
	}
	g.Expect(env.Client.Create(ctx, wl)).To(Succeed())
	write := func(c client.Client, mutate func(*enrollv1.Workload)) error {
		cur := &enrollv1.Workload{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), cur)).To(Succeed())
		patch := client.MergeFrom(cur.DeepCopy())
		mutate(cur)
		return c.Patch(ctx, cur, patch)
	}
	relabel := func(by string) func(*enrollv1.Workload) {
		return func(w *enrollv1.Workload) {
			w.Spec.Labels = map[string]string{"role": "frontend"}
			w.Spec.ChangedBy = by
		}
	}

	err := write(admin, relabel("mallory"))
	expectRefused(g, err, "a namespace admin relabels")
	g.Expect(err.Error()).To(ContainSubstring("that takes the verb relabel on workloads"))
	expectRefused(g, write(admin, func(w *enrollv1.Workload) { w.Spec.Hostname = "evil.example.org"; w.Spec.ChangedBy = "mallory" }),
		"a namespace admin changes the hostname")
	expectRefused(g, write(admin, func(w *enrollv1.Workload) { w.Spec.ChangedBy = "mallory" }),
		"a namespace admin rewrites who changed the attributes")
	g.Expect(apierrors.IsForbidden(write(secrets, relabel("sam")))).To(BeTrue(), "a Secret writer may not write Workloads")

	err = write(relabeler, relabel("ops"))
	expectRefused(g, err, "a relabeler names somebody else")
	g.Expect(err.Error()).To(ContainSubstring("rita must write its own username there, not ops"))
	g.Expect(write(relabeler, relabel("rita"))).To(Succeed(), "a relabeler relabels in its own name")
	got := &enrollv1.Workload{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), got)).To(Succeed())
	g.Expect(got.Spec.Labels).To(Equal(map[string]string{"role": "frontend"}))
	g.Expect(got.Spec.ChangedBy).To(Equal("rita"))

	// Denials are the admin's, relabels the relabeler's: neither rides on the other.
	g.Expect(write(admin, func(w *enrollv1.Workload) {
		w.Spec.Denied = &enrollv1.WorkloadDenial{Reason: "compromised", By: "mallory"}
	})).To(Succeed(), "a namespace admin denies in its own name")
	err = write(relabeler, func(w *enrollv1.Workload) { relabel("rita")(w); w.Spec.Labels["tier"] = "1"; w.Spec.Denied = nil })
	expectRefused(g, err, "a relabel lifts a denial")
	g.Expect(err.Error()).To(ContainSubstring("may not change spec.denied in the same write"))
	g.Expect(write(relabeler, func(w *enrollv1.Workload) { w.Spec.Hostname = "vm-2.example.org"; w.Spec.ChangedBy = "rita" })).
		To(Succeed(), "a denied workload is relabelled, its denial left as it is")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), got)).To(Succeed())
	g.Expect(got.Spec.Denied).NotTo(BeNil(), "the denial stands")
}

// Who may look up a workload (POST /v1/lookup) is decided by RBAC bindings
// of ClusterRole credo-workload-lookup in the workload's namespace. A
// namespace admin (who holds the verb lookup through admin) may let its
// own namespace's workloads be looked up, by anyone it names, and by that
// reaches no other namespace's workloads; a Flux editor (edit, flux-edit)
// and a tenant who writes Secrets may bind nothing.
func TestOnlyANamespaceAdminLetsItsOwnWorkloadsBeLookedUp(t *testing.T) {
	fluxTenantRoles(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns, other := newNamespace(t), newNamespace(t)
	bind(t, ns, "ada", "admin")
	bind(t, ns, "eddie", "edit")
	bind(t, ns, "eddie", "flux-edit")
	admin, editor := userClient(t, "ada"), userClient(t, "eddie")
	secrets := secretWriter(t, ns, "sam")
	binding := func(namespace string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "look-up-", Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "credo-workload-lookup"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "credo:workloads"}},
		}
	}
	lookup := func(namespace string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: "enrollment.credo.dev", Resource: "workloads", Verb: "lookup", Name: "w", Namespace: namespace}
	}
	workloadOf := func(namespace string) (string, []string) {
		return "credo:workload:" + namespace + ":6f1c6d7e", []string{"credo:workloads", "credo:workloads:" + namespace}
	}

	g.Expect(apierrors.IsForbidden(editor.Create(ctx, binding(ns)))).To(BeTrue(), "a Flux editor binds credo-workload-lookup")
	g.Expect(apierrors.IsForbidden(secrets.Create(ctx, binding(ns)))).To(BeTrue(), "a Secret writer binds credo-workload-lookup")
	g.Expect(apierrors.IsForbidden(admin.Create(ctx, binding(other)))).To(BeTrue(), "a namespace admin binds in another namespace")
	g.Eventually(func() error { return admin.Create(ctx, binding(ns)) }, aggregationTimeout, 200*time.Millisecond).
		Should(Succeed(), "a namespace admin lets its workloads be looked up")

	user, groups := workloadOf(other)
	g.Eventually(func() bool { return allowedAs(t, user, groups, lookup(ns)) }, aggregationTimeout, 200*time.Millisecond).
		Should(BeTrue(), "the binding lets every workload look up the admin's workloads")
	g.Expect(allowedAs(t, user, groups, lookup(other))).To(BeFalse(), "the binding reaches the workloads of another namespace")
}
