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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// The cached release keeps everything the CredentialAccount reconciler
// and the access API read, and loses spec.values, the rest of the spec,
// the status' inventory and every snapshot but the latest.
func TestReleaseCacheTransformKeepsOnlyWhatIsRead(t *testing.T) {
	g := NewWithT(t)
	ready := metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "InstallSucceeded"}
	read := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "tenant", UID: "u1", Generation: 4,
			Labels:      map[string]string{"app": "pg"},
			Annotations: map[string]string{meta.ReconcileRequestAnnotation: "credo:1"}},
		Spec: helmv2.HelmReleaseSpec{
			Chart:            &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "postgres"}},
			ChartRef:         &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "postgres"},
			Suspend:          true,
			ValuesFrom:       []helmv2.ValuesReference{{Kind: "Secret", Name: "pg.app.account", ValuesKey: "password", TargetPath: "users.app.password"}},
			PostRenderers:    []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{}}},
			ReleaseName:      "pg-main",
			TargetNamespace:  "tenant-db",
			StorageNamespace: "tenant",
		},
		Status: helmv2.HelmReleaseStatus{ObservedGeneration: 4, Conditions: []metav1.Condition{ready},
			ReconcileRequestStatus: meta.ReconcileRequestStatus{LastHandledReconcileAt: "credo:1"}, LastAttemptedConfigDigest: "sha256:2f1c",
			StorageNamespace: "tenant",
			History:          helmv2.Snapshots{{Version: 2, Status: "deployed", ConfigDigest: "sha256:2f1c"}}},
	}
	full := read.DeepCopy()
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller"}}
	full.Annotations[corev1.LastAppliedConfigAnnotation] = `{"spec":{"values":{"users":{}}}}`
	full.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"app":{}},"blob":"x"}`)}
	full.Spec.Chart.Spec.Version = "1.2.3"
	full.Spec.Chart.Spec.SourceRef = helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}
	full.Spec.Install = &helmv2.Install{CreateNamespace: true}
	full.Spec.Interval = metav1.Duration{Duration: time.Minute}
	full.Status.History = append(helmv2.Snapshots{{Version: 1, Status: "superseded", ConfigDigest: "sha256:aaaa"}}, full.Status.History...)
	full.Status.Inventory = &helmv2.ResourceInventory{Entries: []helmv2.ResourceRef{{ID: "tenant_pg_apps_StatefulSet", Version: "v1"}}}
	full.Status.HelmChart = "flux-system/tenant-pg"
	full.Status.LastAttemptedRevision = "1.2.3"

	out, err := ReleaseCacheTransform()(full)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(read))
}

// countingReader serves one release and counts the reads.
type countingReader struct {
	client.Reader
	hr    *helmv2.HelmRelease
	reads int
}

func (c *countingReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.reads++
	if c.hr == nil || key != client.ObjectKeyFromObject(c.hr) {
		return apierrors.NewNotFound(schema.GroupResource{Group: helmv2.GroupVersion.Group, Resource: "helmreleases"}, key.Name)
	}
	c.hr.DeepCopyInto(obj.(*helmv2.HelmRelease))
	return nil
}

// A release is read uncached once per generation and set of paths; what
// is kept of it is its keys.
func TestReleaseValuesReadsAReleaseOncePerGeneration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "tenant", UID: "u1", Generation: 1}}
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"bob":{},"alice":{"password":"p"}},"admins":"x"}`)}
	reader := &countingReader{hr: hr.DeepCopy()}
	v := &releaseValues{reader: reader}
	cached := hr.DeepCopy()
	cached.Spec.Values = nil

	keys, err := v.keysAt(ctx, cached, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(BeEmpty())
	g.Expect(reader.reads).To(Equal(0), "a source without valuesMap entries reads nothing")

	keys, err = v.keysAt(ctx, cached, []string{"users"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys["users"].keys).To(Equal([]string{"alice", "bob"}))
	_, err = v.keysAt(ctx, cached, []string{"users"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reader.reads).To(Equal(1))

	// Another path of the same generation: read once more, and both kept.
	keys, err = v.keysAt(ctx, cached, []string{"admins"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys["admins"].err).To(MatchError(ContainSubstring("not a map")))
	g.Expect(keys["users"].keys).To(Equal([]string{"alice", "bob"}))
	g.Expect(reader.reads).To(Equal(2))

	// A new generation.
	reader.hr.Generation = 2
	reader.hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"users":{"carol":{}}}`)}
	cached.Generation = 2
	keys, err = v.keysAt(ctx, cached, []string{"users"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys["users"].keys).To(Equal([]string{"carol"}))
	g.Expect(keys).NotTo(HaveKey("admins"))
	g.Expect(reader.reads).To(Equal(3))

	// Created again under the same name: not the cached release.
	reader.hr.UID = "u2"
	cached.Generation = 3
	_, err = v.keysAt(ctx, cached, []string{"users"})
	g.Expect(err).To(MatchError(errReleaseReplaced))

	// Gone: NotFound, and forgotten once no longer listed.
	reader.hr = nil
	_, err = v.keysAt(ctx, cached, []string{"users"})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	v.retain(map[client.ObjectKey]bool{})
	g.Expect(v.read).To(BeEmpty())
}

// Through Setup's manager: the cached release has no values, yet a
// valuesMap source derives its accounts and a platform valuesMap entry
// reserves its usernames for a tenant account declared before the source
// made the platform account (the source is suspended).
func TestReleaseValuesAreReadUncached(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "pg", "postgres", map[string]string{"app": ns})
	setValues(g, ns, "pg", `{"users":{"alice":{}},"admins":{"root":{}}}`)

	g.Eventually(func(g Gomega) {
		var cached helmv2.HelmRelease
		g.Expect(env.Setup.Manager.GetClient().Get(ctx, client.ObjectKey{Namespace: ns, Name: "pg"}, &cached)).To(Succeed())
		g.Expect(cached.Spec.Chart).NotTo(BeNil())
		g.Expect(cached.Generation).To(BeEquivalentTo(2))
		g.Expect(cached.Spec.Values).To(BeNil())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	src := newPostgresUsersSource(t, "pg-"+ns, ns)
	g.Eventually(func() []string { return usernamesOf(g, ns, src.Name) }, 20*time.Second, 100*time.Millisecond).
		Should(Equal([]string{"alice", "postgres"}))

	admins := &credv1.AccountSource{
		ObjectMeta: metav1.ObjectMeta{Name: "admins-" + ns},
		Spec: credv1.AccountSourceSpec{
			ReleaseSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": ns}},
			Suspend:         true,
			Sources: []credv1.AccountSourceEntry{{Kind: credv1.SourceValuesMap, ValuesMap: &credv1.ValuesMapSource{Path: "admins"},
				Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}, Owner: credv1.OwnerPlatform}}},
		},
	}
	g.Expect(env.Client.Create(ctx, admins)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), admins) })
	newAccount(t, ns, "pg-root", "pg", "root", "scram-sha-256")
	a := accountWith(g, ns, "pg-root", accountReason(credv1.SecretFailedCondition, credv1.AccountCollisionReason))
	g.Expect(conditions.GetMessage(a, credv1.SecretFailedCondition)).To(ContainSubstring(`reserved for the platform account "root"`))
}
