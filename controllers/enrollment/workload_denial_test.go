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

package enrollment

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// installDenialsPolicy applies, from config/admission, the policy
// credo-workload-denials, its binding and the parameters, as the platform
// installs them, and waits until kube-apiserver enforces it.
func installDenialsPolicy(t *testing.T, ns, uuid string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}})
	g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	objs, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), "config/admission"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if o.GetName() == DenialsPolicy || (o.GetKind() == "ConfigMap" && o.GetName() == "credo-admission") {
			g.Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("platform-admin"), client.ForceOwnership)).To(Succeed())
		}
	}
	g.Eventually(func() error {
		return env.Client.Patch(ctx, &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":{"reason":"probe","by":"nobody"}}}`)), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is enforced")
}

func deny(t *testing.T, wl *enrollv1.Workload, reason, by string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"denied":{"reason":%q,"by":%q}}}`, reason, by)
	NewWithT(t).Expect(env.Client.Patch(context.Background(), wl, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

func deniedBy(by string) func(*enrollv1.Workload) bool {
	return func(w *enrollv1.Workload) bool {
		return readyReason("False", enrollv1.DeniedReason)(w) && w.Status.DeniedBy == by &&
			conditions.Get(w, meta.ReadyCondition).ObservedGeneration == w.Generation
	}
}

// The enrollment-controller records who denied a workload
// (status.deniedBy, and Ready's message) only when the admission policy
// credo-workload-denials admitted every write of its spec.denied: not
// without the policy (where anybody's name may be written there), not for
// a Workload older than the policy; and clears the record with the denial.
func TestADenialsAuthorIsRecordedOnlyWhenTheAdmissionPolicyAdmittedIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web")
	admin, err := caller.Username(ctx, env.Client)
	g.Expect(err).NotTo(HaveOccurred())

	older := newEnrolledWorkload(t, ns, "web")
	deny(t, older, "laptop reported stolen", "ada")
	got := workloadWith(g, older, 10*time.Second, deniedBy(""))
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(MatchRegexp(
		`^denied at \S+: laptop reported stolen; the workload renews nothing until spec.denied is removed; ` +
			`spec.denied.by says "ada", which is not established: the admission policy credo-workload-denials is not installed$`))

	installDenialsPolicy(t, ns, older.Name)
	time.Sleep(testDenialsPolicySettle)
	newer := newEnrolledWorkload(t, ns, "web")
	deny(t, newer, "decommissioned", admin)
	got = workloadWith(g, newer, 10*time.Second, deniedBy(admin))
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(MatchRegexp(
		`^denied by ` + admin + ` at \S+: decommissioned; the workload renews nothing until spec.denied is removed$`))
	g.Expect(got.Status.DeniedAt).NotTo(BeNil())

	// The older Workload's denial, amended under the policy in the
	// writer's own name, is still not established: an earlier write of it
	// may have come before the policy.
	deny(t, older, "laptop reported stolen", admin)
	got = workloadWith(g, older, 10*time.Second, func(w *enrollv1.Workload) bool {
		return deniedBy("")(w) && strings.Contains(conditions.GetMessage(w, meta.ReadyCondition), `spec.denied.by says "`+admin+`"`)
	})
	g.Expect(conditions.GetMessage(got, meta.ReadyCondition)).To(ContainSubstring(
		"which is not established: the Workload was created at " + older.CreationTimestamp.UTC().Format(time.RFC3339) +
			", before the admission policy credo-workload-denials had been installed for " + testDenialsPolicySettle.String()))

	// Lifted: the record goes with the denial.
	g.Expect(env.Client.Patch(ctx, newer, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"denied":null}}`)))).To(Succeed())
	got = workloadWith(g, newer, 10*time.Second, readyReason("True", enrollv1.EnrolledReason))
	g.Expect(got.Status.DeniedBy).To(BeEmpty())
	g.Expect(got.Status.DeniedAt).To(BeNil())
}

// The policy and binding, as read, establish a denial's author only when
// they admitted every write of it: bound, denying, covering everything,
// failing closed, and older than the Workload by the settle time.
func TestDenialsAdmittedOnlyByThePolicyInForceBeforeTheWorkload(t *testing.T) {
	installed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	shipped := func() (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
		deny, fail := admissionv1.DenyAction, admissionv1.Fail
		return &admissionv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: DenialsPolicy, CreationTimestamp: metav1.NewTime(installed)},
				Spec:       admissionv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail},
			}, &admissionv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: DenialsPolicy, CreationTimestamp: metav1.NewTime(installed)},
				Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName: DenialsPolicy, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
					ParamRef:       &admissionv1.ParamRef{Name: "credo-admission", Namespace: "credo-system", ParameterNotFoundAction: &deny},
					MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{}},
				},
			}
	}
	later := installed.Add(time.Hour)
	cases := []struct {
		name    string
		mutate  func(*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding)
		created time.Time
		why     string
	}{
		{"as shipped, older than the Workload", nil, later, ""},
		{"as shipped, with no matchResources", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources = nil
		}, later, ""},
		{"the Workload older than the policy", nil, installed.Add(-time.Hour), "the Workload was created at 2026-03-01T11:00:00Z, before"},
		{"the Workload created within the settle time", nil, installed.Add(30 * time.Second), "had been installed for 1m0s (at 2026-03-01T12:00:00Z)"},
		{"the binding recreated after the Workload", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.CreationTimestamp = metav1.NewTime(later.Add(time.Minute))
		}, later, "before the admission policy credo-workload-denials had been installed"},
		{"a binding that only warns", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn, admissionv1.Audit}
		}, later, "does not deny"},
		{"a binding of another policy", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.PolicyName = "something-else"
		}, later, `binds "something-else"`},
		{"a binding of some namespaces", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"credo": "strict"}}
		}, later, "does not cover every namespace"},
		{"a binding excluding workloads", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources.ExcludeResourceRules = []admissionv1.NamedRuleWithOperations{{}}
		}, later, "does not cover every namespace"},
		{"a binding that admits without its parameters", func(_ *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) {
			allow := admissionv1.AllowAction
			b.Spec.ParamRef.ParameterNotFoundAction = &allow
		}, later, "admits every write when its parameters are missing"},
		{"a policy that fails open", func(p *admissionv1.ValidatingAdmissionPolicy, _ *admissionv1.ValidatingAdmissionPolicyBinding) {
			ignore := admissionv1.Ignore
			p.Spec.FailurePolicy = &ignore
		}, later, "failurePolicy Ignore"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, b := shipped()
			if tc.mutate != nil {
				tc.mutate(p, b)
			}
			why := policyAdmitted(p, b, tc.created, DefaultDenialsPolicySettle)
			if tc.why == "" {
				NewWithT(t).Expect(why).To(BeEmpty())
			} else {
				NewWithT(t).Expect(why).To(ContainSubstring(tc.why))
			}
		})
	}
}
