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
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// platformNamespace is where config/ installs credo.
const platformNamespace = "credo-system"

var (
	rolesOnce, policyOnce sync.Once
	rolesErr, policyErr   error
)

// tenantRoles starts kube-controller-manager on the shared control plane,
// whose clusterrole-aggregation controller folds credo's roles into the
// built-in view, edit and admin, and applies the RBAC config/rbac ships
// (the aggregated roles, each controller's role bound to its
// ServiceAccount).
func tenantRoles(t *testing.T) *controlplane.Environment {
	t.Helper()
	env := controlPlane(t)
	rolesOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if rolesErr = env.StartControllerManager(ctx); rolesErr != nil {
			return
		}
		rolesErr = applyConfig(ctx, env, "config/rbac", func(o *unstructured.Unstructured) bool {
			return o.GetAPIVersion() == rbacv1.SchemeGroupVersion.String() || o.GetKind() == "ServiceAccount"
		})
	})
	if rolesErr != nil {
		t.Fatalf("installing credo's RBAC: %v", rolesErr)
	}
	return env
}

// denialPolicy applies, from config/admission, the credo-workload-denials
// policy, its binding and the parameters (the Secret policies are left
// out: the access API of these tests writes account Secrets as an identity
// they do not name), and waits until kube-apiserver enforces it.
func denialPolicy(t *testing.T, env *controlplane.Environment, ns, uuid string) {
	t.Helper()
	policyOnce.Do(func() {
		policyErr = applyConfig(context.Background(), env, "config/admission", func(o *unstructured.Unstructured) bool {
			return o.GetName() == "credo-workload-denials" || o.GetKind() == "ConfigMap"
		})
	})
	g := NewWithT(t)
	g.Expect(policyErr).NotTo(HaveOccurred())
	g.Eventually(func() error {
		return env.Client.Patch(context.Background(), workloadRef(ns, uuid), denyPatch("probe", "nobody"), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")
}

var attributesOnce sync.Once

// attributesPolicy applies, from config/admission, the policy
// credo-workload-attributes and its binding, and waits until kube-apiserver
// enforces it.
func attributesPolicy(t *testing.T, env *controlplane.Environment, ns, uuid string) {
	t.Helper()
	var err error
	attributesOnce.Do(func() {
		err = applyConfig(context.Background(), env, "config/admission", func(o *unstructured.Unstructured) bool {
			return o.GetName() == "credo-workload-attributes"
		})
	})
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		return env.Client.Patch(context.Background(), workloadRef(ns, uuid),
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"changedBy":"nobody"}}`)), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")
}

// applyConfig server-side applies the objects of a directory of the
// repository that keep selects, as the platform's administrator.
func applyConfig(ctx context.Context, env *controlplane.Environment, dir string, keep func(*unstructured.Unstructured) bool) error {
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: platformNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	objs, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), dir))
	if err != nil {
		return err
	}
	var applied int
	for _, o := range objs {
		if !keep(o) {
			continue
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("platform-admin"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		applied++
	}
	if applied == 0 {
		return fmt.Errorf("nothing to apply in %s", dir)
	}
	return nil
}

// enrolledWorkload creates, in ns, the Workload uuid as the enrollment
// server does, with the status of an issued certificate.
func enrolledWorkload(ctx context.Context, t *testing.T, env *controlplane.Environment, ns, uuid string) *enrollv1.Workload {
	t.Helper()
	g := NewWithT(t)
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: uuid, Namespace: ns},
		Spec:       enrollv1.WorkloadSpec{Policy: "web", Token: "t1", Hostname: "vm-1.example.org", Labels: map[string]string{"role": "web"}},
	}
	g.Expect(env.Client.Create(ctx, wl)).To(Succeed())
	notAfter := metav1.NewTime(time.Now().Add(20 * time.Hour).Truncate(time.Second))
	wl.Status = enrollv1.WorkloadStatus{Serial: "aa78dd39", NotAfter: &notAfter}
	g.Expect(env.Client.Status().Update(ctx, wl)).To(Succeed())
	return wl
}

// tenant binds user, in ns, to the built-in ClusterRole role and returns
// its kubeconfig and a client authenticated as it.
func tenant(ctx context.Context, t *testing.T, env *controlplane.Environment, ns, user, role string) (string, client.Client) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
	path, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	return path, userClient(t, env, user)
}

func userClient(t *testing.T, env *controlplane.Environment, user string, groups ...string) client.Client {
	t.Helper()
	c, err := env.UserClient(user, groups)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return c
}

// awaitAggregated waits until user may verb workloads in ns: until the
// clusterrole-aggregation controller has folded the credo role granting it
// into the user's built-in role. A refusal seen then is the role's, not
// aggregation lagging.
func awaitAggregated(t *testing.T, env *controlplane.Environment, ns, user, verb string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: enrollv1.GroupVersion.Group, Resource: "workloads", Verb: verb},
		}}
		g.Expect(env.Client.Create(context.Background(), sar)).To(Succeed())
		return sar.Status.Allowed
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "%s may %s workloads in %s", user, verb, ns)
}

func workloadRef(ns, uuid string) *enrollv1.Workload {
	return &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid}}
}

func denyPatch(reason, by string) client.Patch {
	return client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"denied":{"reason":%q,"by":%q}}}`, reason, by))
}

func denialOf(ctx context.Context, g Gomega, env *controlplane.Environment, ns, uuid string) *enrollv1.WorkloadDenial {
	var wl enrollv1.Workload
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &wl)).To(Succeed())
	return wl.Spec.Denied
}

// plugin runs kubectl credo with args as the user of kubeconfig.
func plugin(kubeconfig string, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(append(args, "--kubeconfig", kubeconfig), strings.NewReader(""), &out)
	return out.String(), err
}

// A tenant bound to the built-in admin role denies and undenies a Workload
// of its namespace with the plugin, which records it as the author, but
// cannot change what the workload is authorized for (labels and hostname,
// refused by credo-workload-attributes; its policy, by the CRD);
// tenants bound to edit or view can do neither; errors say what happened.
func TestANamespaceAdminDeniesAndUndeniesButEditAndViewCannot(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns, uuid = "deny-admin", "3f1c2b8e-0000-4000-8000-0000000000a1"
	wl := enrolledWorkload(ctx, t, env, ns, uuid)
	ada, adaClient := tenant(ctx, t, env, ns, "ada", "admin")
	eddie, _ := tenant(ctx, t, env, ns, "eddie", "edit")
	vic, _ := tenant(ctx, t, env, ns, "vic", "view")
	// credo-enrollment-admin (delete, and now patch) is in admin,
	// credo-enrollment-viewer (get) in edit and view.
	awaitAggregated(t, env, ns, "ada", "delete")
	awaitAggregated(t, env, ns, "eddie", "get")
	awaitAggregated(t, env, ns, "vic", "get")

	out, err := plugin(ada, "workload", "deny", uuid, "--reason", "laptop reported stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("workload deny-admin/" + uuid + " (hostname vm-1.example.org, policy web) denied by ada: laptop reported stolen\n"))
	g.Expect(out).To(ContainSubstring("takes effect at the workload's next renewal"))
	g.Expect(out).To(MatchRegexp(`current certificate \(serial aa78dd39\) stays valid until its notAfter, ` +
		regexp.QuoteMeta(wl.Status.NotAfter.UTC().Format(time.RFC3339)) + ` \(in (19|20)h\)`))
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(Equal(&enrollv1.WorkloadDenial{Reason: "laptop reported stolen", By: "ada"}))
	var got enrollv1.Workload
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &got)).To(Succeed())
	g.Expect(got.ManagedFields).To(ContainElement(HaveField("Manager", fieldManager)))

	_, err = plugin(ada, "workload", "deny", uuid, "--reason", " ", "-n", ns)
	g.Expect(err).To(MatchError(ContainSubstring("--reason is required")))

	// What a namespace admin may not do with update on Workloads.
	err = adaClient.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"policy":"admin-tools"}}`)))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a policy change: %v", err)
	g.Expect(err).To(MatchError(ContainSubstring("policy is immutable")))
	attributesPolicy(t, env, ns, uuid)
	for _, patch := range []string{
		`{"spec":{"labels":{"role":"db"},"changedBy":"ada"}}`,
		`{"spec":{"hostname":"vm-2.example.org","changedBy":"ada"}}`,
	} {
		err := adaClient.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(patch)))
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", patch, err)
		g.Expect(err).To(MatchError(ContainSubstring("that takes the verb relabel on workloads")))
	}
	_, err = plugin(ada, "workload", "label", uuid, "role=db", "-n", ns)
	g.Expect(err).To(MatchError(ContainSubstring("ada may not change the labels or hostname of workload "+uuid)), "the plugin says why")

	for user, kubeconfig := range map[string]string{"eddie": eddie, "vic": vic} {
		_, err = plugin(kubeconfig, "workload", "deny", uuid, "--reason", "not mine to deny", "-n", ns)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", user, err)
		g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`denying workload %s/%s: workloads.enrollment.credo.dev %q is forbidden: User %q cannot patch resource "workloads"`, ns, uuid, uuid, user))))
		_, err = plugin(kubeconfig, "workload", "undeny", uuid, "-n", ns)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", user, err)
	}
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(HaveField("By", "ada"), "edit and view changed nothing")

	_, err = plugin(ada, "workload", "deny", uuid, "--reason", "x", "-A")
	g.Expect(err).To(MatchError(ContainSubstring("you may not list workloads cluster-wide; pass -n <namespace> instead of -A")), "-A tells a namespace admin to name the namespace")
	_, err = plugin(ada, "workload", "deny", uuid, "--reason", "x")
	g.Expect(err).To(MatchError(ContainSubstring("reading workload "+uuid+" in default, the current context's namespace: pass -n <namespace>, or -A to look in every namespace: ")),
		"without -n, kubectl's default namespace, where ada may read nothing")
	_, err = plugin(ada, "workload", "deny", uuid, "--reason", "x", "-A", "-n", ns)
	g.Expect(err).To(MatchError("pass -n <namespace> or -A, not both"))
	_, err = plugin(ada, "workload", "undeny", "3f1c2b8e-0000-4000-8000-00000000dead", "-n", ns)
	g.Expect(err).To(MatchError("no workload 3f1c2b8e-0000-4000-8000-00000000dead in deny-admin (kubectl get workloads -n deny-admin)"))

	out, err = plugin(ada, "workload", "undeny", uuid, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload deny-admin/"+uuid+" (hostname vm-1.example.org, policy web) is no longer denied (was denied: laptop reported stolen)\n"+
		`Who denied it is not established: spec.denied.by says "ada"`), "nothing established ada as its author: TestUndenyNamesOnlyAnEstablishedAuthor")
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(BeNil())
	out, err = plugin(ada, "workload", "undeny", uuid, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("was not denied; nothing changed"))
}

// Without -n, deny and undeny act in the current context's namespace, as
// kubectl does: a namespace admin whose kubeconfig names its namespace
// (as a platform hands it out) denies and undenies without -n.
func TestWorkloadDenyWithoutANamespaceUsesTheContextsNamespace(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns, uuid = "deny-context", "3f1c2b8e-0000-4000-8000-0000000000f1"
	enrolledWorkload(ctx, t, env, ns, uuid)
	ada, _ := tenant(ctx, t, env, ns, "ada-context", "admin")
	g.Expect(controlplane.SetKubeconfigNamespace(ada, ns)).To(Succeed())
	awaitAggregated(t, env, ns, "ada-context", "patch")

	out, err := plugin(ada, "workload", "deny", uuid, "--reason", "decommissioned")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload " + ns + "/" + uuid + " "))
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(HaveField("By", "ada-context"))
	out, err = plugin(ada, "workload", "undeny", uuid)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(BeNil())
	_, err = plugin(ada, "workload", "undeny", "3f1c2b8e-0000-4000-8000-00000000dead")
	g.Expect(err).To(MatchError("no workload 3f1c2b8e-0000-4000-8000-00000000dead in " + ns + ", the current context's namespace: pass -n <namespace>, or -A to look in every namespace"))
}

// With -A the plugin finds a Workload in whichever namespace holds it,
// and refuses to guess when none or several do.
func TestWorkloadDenyAllNamespacesLooksInEveryNamespace(t *testing.T) {
	env := controlPlane(t)
	ctx := context.Background()
	g := NewWithT(t)
	const uuid, twin = "3f1c2b8e-0000-4000-8000-0000000000b1", "3f1c2b8e-0000-4000-8000-0000000000b2"
	enrolledWorkload(ctx, t, env, "find-a", uuid)
	enrolledWorkload(ctx, t, env, "find-a", twin)
	enrolledWorkload(ctx, t, env, "find-b", twin)

	out, err := plugin(env.Kubeconfig, "workload", "deny", uuid, "--reason", "decommissioned", "-A")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload find-a/" + uuid + " "))
	g.Expect(out).To(ContainSubstring("denied by admin: decommissioned"))
	g.Expect(denialOf(ctx, g, env, "find-a", uuid)).To(HaveField("By", "admin"))

	_, err = plugin(env.Kubeconfig, "workload", "deny", twin, "--reason", "decommissioned", "-A")
	g.Expect(err).To(MatchError("workload " + twin + " is in 2 namespaces (find-a, find-b): pass -n <namespace>"))
	_, err = plugin(env.Kubeconfig, "workload", "undeny", "3f1c2b8e-0000-4000-8000-00000000dead", "--all-namespaces")
	g.Expect(err).To(MatchError("no workload 3f1c2b8e-0000-4000-8000-00000000dead in any namespace (kubectl get workloads -A)"))
	g.Expect(denialOf(ctx, g, env, "find-b", twin)).To(BeNil())
}

// With config/admission's credo-workload-denials installed, a namespace
// admin cannot deny in another user's name, nor in the enrollment
// server's, nor rewrite the reason of someone else's denial; a deny naming
// its requester (the plugin's) passes, and so does the enrollment-
// controller's ServiceAccount writing enrollment.DeniedBy as the server
// does.
func TestADenialNamesItsRequester(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns, uuid = "deny-forged", "3f1c2b8e-0000-4000-8000-0000000000c1"
	enrolledWorkload(ctx, t, env, ns, uuid)
	denialPolicy(t, env, ns, uuid)
	ada, _ := tenant(ctx, t, env, ns, "ada", "admin")
	_, mallory := tenant(ctx, t, env, ns, "mallory", "admin")
	awaitAggregated(t, env, ns, "mallory", "patch")
	refused := func(err error, what string) {
		t.Helper()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: want Forbidden by the admission policy, got %v", what, err)
		g.Expect(err).To(MatchError(ContainSubstring("ValidatingAdmissionPolicy 'credo-workload-denials'")), what)
	}

	err := mallory.Patch(ctx, workloadRef(ns, uuid), denyPatch("forged", "ada"))
	refused(err, "a deny in another user's name")
	g.Expect(err).To(MatchError(ContainSubstring("spec.denied.by names who denied the workload: mallory may write its own username there, but not ada")))
	refused(mallory.Patch(ctx, workloadRef(ns, uuid), denyPatch("forged", enrollment.DeniedBy)), "a deny in the enrollment server's name")
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(BeNil())

	out, err := plugin(ada, "workload", "deny", uuid, "--reason", "laptop reported stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), "the plugin names its requester: %s", out)
	refused(mallory.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":{"reason":"rewritten"}}}`))),
		"rewriting the reason of ada's denial under her name")
	g.Expect(denialOf(ctx, g, env, ns, uuid)).To(Equal(&enrollv1.WorkloadDenial{Reason: "laptop reported stolen", By: "ada"}))
	g.Expect(mallory.Patch(ctx, workloadRef(ns, uuid), denyPatch("rewritten", "mallory"))).To(Succeed(), "a deny in one's own name")
	g.Expect(mallory.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":null}}`)))).To(Succeed(), "undeny is RBAC's")
	g.Expect(mallory.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":{"reason":"from Git"}}}`)))).To(Succeed(),
		"a deny naming nobody, as GitOps writes it")

	// The enrollment server, as its ServiceAccount with the RBAC config/rbac
	// binds to it, denies a duplicate by an update.
	user, groups := controlplane.ServiceAccountUser(platformNamespace, "credo-enrollment-controller")
	server := userClient(t, env, user, groups...)
	var wl enrollv1.Workload
	g.Expect(server.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &wl)).To(Succeed())
	wl.Spec.Denied = &enrollv1.WorkloadDenial{Reason: "duplicate identity", By: enrollment.DeniedBy}
	g.Expect(server.Update(ctx, &wl)).To(Succeed())
}

// With credo-workload-denials, a namespace admin cannot take another
// author's name off a denial that stands, another admin's or the
// enrollment server's (a duplicate identity's): not by removing
// spec.denied.by, not by replacing the denial with a reason of its own that
// names nobody, not by rewriting its reason under the name it keeps. The
// one named may leave its name out; anyone may replace a denial in their
// own name, amend one that names nobody without naming anybody, or lift it.
func TestADenialKeepsItsAuthorsName(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	const ns, uuid = "deny-erased", "3f1c2b8e-0000-4000-8000-0000000000d1"
	enrolledWorkload(ctx, t, env, ns, uuid)
	denialPolicy(t, env, ns, uuid)
	_, ada := tenant(ctx, t, env, ns, "ada", "admin")
	_, mallory := tenant(ctx, t, env, ns, "mallory", "admin")
	awaitAggregated(t, env, ns, "ada", "update")
	awaitAggregated(t, env, ns, "mallory", "patch")
	user, groups := controlplane.ServiceAccountUser(platformNamespace, "credo-enrollment-controller")
	server := userClient(t, env, user, groups...)

	adas := &enrollv1.WorkloadDenial{Reason: "laptop reported stolen", By: "ada"}
	duplicate := &enrollv1.WorkloadDenial{Reason: "duplicate identity", By: enrollment.DeniedBy}
	fromGit := &enrollv1.WorkloadDenial{Reason: "decommissioned in Git"}
	cases := []struct {
		name    string
		denial  *enrollv1.WorkloadDenial
		author  client.Client
		writer  client.Client
		patch   string
		allowed bool
	}{
		{"mallory removes ada's name from her denial", adas, ada, mallory, `{"spec":{"denied":{"by":null}}}`, false},
		{"mallory replaces ada's denial with a reason of her own naming nobody", adas, ada, mallory,
			`{"spec":{"denied":{"reason":"nothing to see","by":null}}}`, false},
		{"mallory rewrites the reason of ada's denial under ada's name", adas, ada, mallory, `{"spec":{"denied":{"reason":"nothing to see"}}}`, false},
		{"mallory removes the enrollment server's name from a duplicate's denial", duplicate, server, mallory, `{"spec":{"denied":{"by":null}}}`, false},
		{"mallory replaces a duplicate's denial with a reason of her own naming nobody", duplicate, server, mallory,
			`{"spec":{"denied":{"reason":"nothing to see","by":null}}}`, false},
		{"mallory rewrites the reason of a duplicate's denial under the server's name", duplicate, server, mallory,
			`{"spec":{"denied":{"reason":"nothing to see"}}}`, false},

		{"ada takes her own name off her denial", adas, ada, ada, `{"spec":{"denied":{"by":null}}}`, true},
		{"mallory replaces ada's denial in her own name", adas, ada, mallory, `{"spec":{"denied":{"reason":"still stolen","by":"mallory"}}}`, true},
		{"mallory replaces a duplicate's denial in her own name", duplicate, server, mallory,
			`{"spec":{"denied":{"reason":"investigating the clone","by":"mallory"}}}`, true},
		{"mallory amends a denial naming nobody without naming anybody", fromGit, mallory, mallory, `{"spec":{"denied":{"reason":"decommissioned"}}}`, true},
		{"mallory lifts ada's denial", adas, ada, mallory, `{"spec":{"denied":null}}`, true},
		{"mallory lifts a duplicate's denial", duplicate, server, mallory, `{"spec":{"denied":null}}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			// The author writes the denial by an update, as the enrollment
			// server does (it may not patch), on a workload not denied.
			g.Expect(env.Client.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":null}}`)))).To(Succeed())
			var wl enrollv1.Workload
			g.Expect(tc.author.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &wl)).To(Succeed())
			wl.Spec.Denied = tc.denial.DeepCopy()
			g.Expect(tc.author.Update(ctx, &wl)).To(Succeed(), "the author's denial")

			err := tc.writer.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(tc.patch)))
			if tc.allowed {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden by the admission policy, got %v", err)
			g.Expect(err).To(MatchError(ContainSubstring("ValidatingAdmissionPolicy 'credo-workload-denials'")))
			if strings.Contains(tc.patch, `"by":null`) {
				g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec.denied.by names who denied the workload: mallory may not remove %s from a denial that stands", tc.denial.By))))
			} else {
				g.Expect(err).To(MatchError(ContainSubstring("spec.denied.by names who denied the workload: mallory may write its own username there, but not " + tc.denial.By)))
			}
			g.Expect(denialOf(ctx, g, env, ns, uuid)).To(Equal(tc.denial), "the denial stands as its author wrote it")
		})
	}
}

// undeny (and deny, of the denial it replaces) names who denied only from
// the enrollment-controller's record, status.deniedBy, which a namespace
// admin may not write, and only while it is the record of the denial as
// read: what spec.denied.by says otherwise is printed as unverified, never
// as fact. The record is written here as the enrollment-controller writes
// it (its test is controllers/enrollment's).
func TestUndenyNamesOnlyAnEstablishedAuthor(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns, uuid = "undeny-author", "3f1c2b8e-0000-4000-8000-0000000000e1"
	enrolledWorkload(ctx, t, env, ns, uuid)
	ada, _ := tenant(ctx, t, env, ns, "ada", "admin")
	mallory, malloryClient := tenant(ctx, t, env, ns, "mallory", "admin")
	awaitAggregated(t, env, ns, "ada", "patch")
	awaitAggregated(t, env, ns, "mallory", "patch")
	record := func(by string) {
		t.Helper()
		var wl enrollv1.Workload
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &wl)).To(Succeed())
		wl.Status.DeniedBy = by
		wl.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: enrollv1.DeniedReason,
			Message: "denied by " + by, ObservedGeneration: wl.Generation, LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, &wl)).To(Succeed())
	}

	out, err := plugin(ada, "workload", "deny", uuid, "--reason", "laptop reported stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	// Nothing established it: spec.denied.by is what a namespace admin wrote.
	out, err = plugin(mallory, "workload", "undeny", uuid, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload undeny-author/" + uuid + " (hostname vm-1.example.org, policy web) is no longer denied (was denied: laptop reported stolen)\n" +
		`Who denied it is not established: spec.denied.by says "ada"`))
	g.Expect(out).NotTo(ContainSubstring("denied by ada"))

	// A namespace admin cannot write the record.
	err = malloryClient.Status().Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType, []byte(`{"status":{"deniedBy":"ada"}}`)))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a tenant writing status.deniedBy: %v", err)

	// Established by the enrollment-controller for the denial as read.
	out, err = plugin(ada, "workload", "deny", uuid, "--reason", "laptop reported stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	record("ada")
	out, err = plugin(mallory, "workload", "deny", uuid, "--reason", "still stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("denied by mallory: still stolen\n(it replaces the denial by ada: laptop reported stolen)\n"))
	// The record is ada's, of an earlier generation: mallory's denial is not established.
	out, err = plugin(ada, "workload", "undeny", uuid, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload undeny-author/" + uuid + " (hostname vm-1.example.org, policy web) is no longer denied (was denied: still stolen)\n" +
		`Who denied it is not established: spec.denied.by says "mallory"`))

	out, err = plugin(ada, "workload", "deny", uuid, "--reason", "laptop reported stolen", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	record("ada")
	out, err = plugin(mallory, "workload", "undeny", uuid, "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload undeny-author/" + uuid + " (hostname vm-1.example.org, policy web) is no longer denied (was denied by ada: laptop reported stolen)\n"))
}

// A relabeler (the platform binds credo-workload-relabeler) changes a
// workload's labels and hostname with the plugin, which names it in
// spec.changedBy as credo-workload-attributes requires; key- removes a
// label; the change is conditional on the version read.
func TestARelabelerRelabelsAWorkloadInItsOwnName(t *testing.T) {
	env := tenantRoles(t)
	ctx := context.Background()
	g := NewWithT(t)
	const ns, uuid = "relabel", "3f1c2b8e-0000-4000-8000-0000000000e1"
	enrolledWorkload(ctx, t, env, ns, uuid)
	admin, err := caller.Username(ctx, env.Client)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Patch(ctx, workloadRef(ns, uuid), client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"labels":{"role":"web","zone":"eu-1"},"changedBy":%q}}`, admin)))).To(Succeed())
	attributesPolicy(t, env, ns, uuid)
	rita, _ := tenant(ctx, t, env, ns, "rita", "admin")
	tenant(ctx, t, env, ns, "rita", "credo-workload-relabeler")
	awaitAggregated(t, env, ns, "rita", "relabel")

	out, err := plugin(rita, "workload", "label", uuid, "role=api", "zone-", "tier=1", "--hostname", "api-1.example.org", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HavePrefix("workload relabel/" + uuid + " (policy web) relabelled by rita: labels role=api,tier=1 (were role=web,zone=eu-1), " +
		"hostname api-1.example.org (was vm-1.example.org)\nThe registry answers them once the enrollment-controller has established them"))
	var got enrollv1.Workload
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &got)).To(Succeed())
	g.Expect(got.Spec.Labels).To(Equal(map[string]string{"role": "api", "tier": "1"}))
	g.Expect(got.Spec.Hostname).To(Equal("api-1.example.org"))
	g.Expect(got.Spec.ChangedBy).To(Equal("rita"))

	out, err = plugin(rita, "workload", "label", uuid, "role-", "tier-", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("labels <none> (were role=api,tier=1)"))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: uuid}, &got)).To(Succeed())
	g.Expect(got.Spec.Labels).To(BeEmpty())
}
