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
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/caller"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// roles allows role=frontend or role=backend, and any tier.
func roles(values ...string) func(*enrollv1.EnrollmentPolicy) {
	return func(p *enrollv1.EnrollmentPolicy) {
		p.Spec.AllowedLabels = []enrollv1.LabelRule{{Key: "role", Values: values}, {Key: "tier"}}
	}
}

// newLabelledWorkload registers a workload of policy with labels, as
// enrollment step 1 does, and records its certificate as step 2 did before
// attributes were established (no status.labels): a workload enrolled
// before the upgrade.
func newLabelledWorkload(t *testing.T, ns, policy string, labels map[string]string) *enrollv1.Workload {
	t.Helper()
	wl := &enrollv1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: newWorkloadUUID(t), Namespace: ns},
		Spec:       enrollv1.WorkloadSpec{Policy: policy, Token: "tok123", Hostname: "vm-1.example.org", Labels: labels},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), wl)).To(Succeed())
	enrollWorkload(t, wl, time.Now().Add(time.Hour))
	return wl
}

func relabelWorkload(t *testing.T, wl *enrollv1.Workload, labels map[string]string, hostname, by string) {
	t.Helper()
	cur := &enrollv1.Workload{}
	g := NewWithT(t)
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), cur)).To(Succeed())
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Labels, cur.Spec.Hostname, cur.Spec.ChangedBy = labels, hostname, by
	g.Expect(env.Client.Patch(context.Background(), cur, patch)).To(Succeed())
}

// established matches a Workload whose status holds labels as its
// established labels, judged at its current generation.
func established(labels map[string]string) func(*enrollv1.Workload) bool {
	return func(w *enrollv1.Workload) bool {
		return w.Status.AttributesGeneration == w.Generation && maps.Equal(w.Status.Labels, labels)
	}
}

// workloadEvent waits for an event of type and reason on wl whose message
// contains substr, and returns its message.
func workloadEvent(g Gomega, wl *enrollv1.Workload, typ, reason, substr string) string {
	var msg string
	g.Eventually(func() bool {
		var list corev1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(wl.Namespace)); err != nil {
			return false
		}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == wl.Name && ev.Type == typ && ev.Reason == reason && strings.Contains(ev.Message, substr) {
				msg = ev.Message
				return true
			}
		}
		return false
	}, 15*time.Second, 100*time.Millisecond).Should(BeTrue(), "a %s %s event on %s containing %q", typ, reason, wl.Name, substr)
	return msg
}

// A workload's labels and hostname change without re-enrollment: the
// enrollment-controller establishes a change its policy allows
// (status.labels, status.hostname), records it with the previous values,
// refuses one the policy does not allow (AttributesRefused, the
// established labels kept), and drops an established label the policy
// stops allowing (recorded as the policy's). A workload enrolled before
// attributes were established gets them from its spec.
func TestAWorkloadsAttributesChangeWithinItsPolicyAndEachChangeIsRecorded(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	policy := newPolicy(t, ns, "web", roles("frontend", "backend"))
	wl := newLabelledWorkload(t, ns, "web", map[string]string{"role": "backend"})

	got := workloadWith(g, wl, 10*time.Second, established(map[string]string{"role": "backend"}))
	g.Expect(got.Status.Hostname).To(Equal("vm-1.example.org"))
	g.Expect(got.Status.AttributeHistory).To(BeEmpty(), "establishing the enrolled attributes is no change")

	relabelWorkload(t, wl, map[string]string{"role": "frontend", "tier": "1"}, "vm-2.example.org", "ada")
	got = workloadWith(g, wl, 10*time.Second, established(map[string]string{"role": "frontend", "tier": "1"}))
	g.Expect(got.Status.Hostname).To(Equal("vm-2.example.org"))
	g.Expect(got.Status.AttributeHistory).To(HaveLen(1))
	change := got.Status.AttributeHistory[0]
	g.Expect(change.PreviousLabels).To(Equal(map[string]string{"role": "backend"}))
	g.Expect(change.PreviousHostname).To(Equal("vm-1.example.org"))
	g.Expect(change.By).To(BeEmpty(), "without credo-workload-attributes, spec.changedBy proves nothing")
	g.Expect(workloadEvent(g, wl, corev1.EventTypeNormal, enrollv1.AttributesChangedReason, "role=frontend")).To(Equal(
		`labels role=frontend,tier=1 (were role=backend), hostname "vm-2.example.org" (was "vm-1.example.org"), changed by ` +
			`unknown (spec.changedBy says "ada", which is not established: the admission policy credo-workload-attributes is not installed)`))
	g.Expect(conditions.Get(got, enrollv1.AttributesRefusedCondition)).To(BeNil())
	g.Expect(conditions.IsReady(got)).To(BeTrue(), "a relabel leaves the certificate's state alone")

	// Not allowed by the policy: refused whole, the established labels kept.
	relabelWorkload(t, wl, map[string]string{"role": "admin", "tier": "2"}, "vm-2.example.org", "ada")
	got = workloadWith(g, wl, 10*time.Second, func(w *enrollv1.Workload) bool {
		return established(map[string]string{"role": "frontend", "tier": "1"})(w) && conditions.IsTrue(w, enrollv1.AttributesRefusedCondition)
	})
	g.Expect(conditions.GetReason(got, enrollv1.AttributesRefusedCondition)).To(Equal(enrollv1.LabelsNotAllowedReason))
	g.Expect(conditions.GetMessage(got, enrollv1.AttributesRefusedCondition)).To(Equal(
		`spec.labels are not established: label role="admin" is not allowed by enrollment policy web (allowed: [frontend backend]); ` +
			`the registry answers labels role=frontend,tier=1`))
	g.Expect(got.Status.AttributeHistory).To(HaveLen(1), "a refused change is no change")
	env.WarningEvent(g, ns, enrollv1.WorkloadKind, wl.Name, enrollv1.LabelsNotAllowedReason)

	// Allowed again: the refusal goes.
	relabelWorkload(t, wl, map[string]string{"role": "frontend", "tier": "1"}, "vm-2.example.org", "ada")
	got = workloadWith(g, wl, 10*time.Second, func(w *enrollv1.Workload) bool {
		return established(map[string]string{"role": "frontend", "tier": "1"})(w) && conditions.Get(w, enrollv1.AttributesRefusedCondition) == nil
	})
	g.Expect(got.Status.AttributeHistory).To(HaveLen(1))

	// The policy stops allowing role=frontend: it is dropped, as the policy's change.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
	patch := client.MergeFrom(policy.DeepCopy())
	roles("backend")(policy)
	g.Expect(env.Client.Patch(ctx, policy, patch)).To(Succeed())
	got = workloadWith(g, wl, 10*time.Second, func(w *enrollv1.Workload) bool {
		return maps.Equal(w.Status.Labels, map[string]string{"tier": "1"}) && len(w.Status.AttributeHistory) == 2
	})
	g.Expect(got.Status.AttributeHistory[0].By).To(Equal("policy/web"))
	g.Expect(got.Status.AttributeHistory[0].PreviousLabels).To(Equal(map[string]string{"role": "frontend", "tier": "1"}))
	g.Expect(conditions.IsTrue(got, enrollv1.AttributesRefusedCondition)).To(BeTrue(), "spec.labels still name role=frontend")
	env.WarningEvent(g, ns, enrollv1.WorkloadKind, wl.Name, enrollv1.LabelsWithdrawnReason)
}

// installAttributesPolicy applies, from config/admission, the policy
// credo-workload-attributes and its binding, as the platform installs them,
// and waits until kube-apiserver enforces it.
func installAttributesPolicy(t *testing.T, ns, uuid string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	objs, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), "config/admission"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		if o.GetName() == AttributesPolicy {
			g.Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("platform-admin"), client.ForceOwnership)).To(Succeed())
		}
	}
	g.Eventually(func() error {
		return env.Client.Patch(ctx, &enrollv1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"changedBy":"nobody"}}`)), client.DryRunAll)
	}, 20*time.Second, 200*time.Millisecond).Should(MatchError(ContainSubstring("must write its own username there")), "the policy is enforced")
}

// Who relabelled a workload is recorded only when credo-workload-attributes
// admitted every change of its attributes (it admits one only in its
// writer's name): not for a Workload older than the policy.
func TestARelabelsAuthorIsRecordedOnlyWhenTheAdmissionPolicyAdmittedIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	newPolicy(t, ns, "web", roles())
	admin, err := caller.Username(ctx, env.Client)
	g.Expect(err).NotTo(HaveOccurred())

	older := newLabelledWorkload(t, ns, "web", map[string]string{"role": "a"})
	installAttributesPolicy(t, ns, older.Name)
	time.Sleep(testDenialsPolicySettle)
	newer := newLabelledWorkload(t, ns, "web", map[string]string{"role": "a"})
	workloadWith(g, newer, 10*time.Second, established(map[string]string{"role": "a"}))
	workloadWith(g, older, 10*time.Second, established(map[string]string{"role": "a"}))

	relabelWorkload(t, newer, map[string]string{"role": "b"}, "vm-1.example.org", admin)
	got := workloadWith(g, newer, 10*time.Second, established(map[string]string{"role": "b"}))
	g.Expect(got.Status.AttributeHistory).To(HaveLen(1))
	g.Expect(got.Status.AttributeHistory[0].By).To(Equal(admin))

	relabelWorkload(t, older, map[string]string{"role": "b"}, "vm-1.example.org", admin)
	got = workloadWith(g, older, 10*time.Second, established(map[string]string{"role": "b"}))
	g.Expect(got.Status.AttributeHistory[0].By).To(BeEmpty(), "an earlier change may have come before the policy")
	g.Expect(workloadEvent(g, older, corev1.EventTypeNormal, enrollv1.AttributesChangedReason, "role=b")).To(ContainSubstring(
		"which is not established: the Workload was created at " + older.CreationTimestamp.UTC().Format(time.RFC3339) +
			", before the admission policy credo-workload-attributes had been installed for " + testDenialsPolicySettle.String()))
}
