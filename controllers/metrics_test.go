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

package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// durationSamples returns how many reconciles of the object
// gotk_reconcile_duration_seconds holds, and whether it has a series at all.
func durationSamples(g Gomega, kind, ns, name string) (uint64, bool) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(reconcileMetrics.Collectors()...)
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() != "gotk_reconcile_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, map[string]string{"kind": kind, "namespace": ns, "name": name}) {
				return m.GetHistogram().GetSampleCount(), true
			}
		}
	}
	return 0, false
}

// counterValue reads a credo counter from controller-runtime's registry,
// where the binaries serve it.
func counterValue(g Gomega, name string, labels map[string]string) float64 {
	families, err := crmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestEveryReconcilerRecordsItsDurationAndDropsItWhenTheObjectIsGone(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		create func(t *testing.T, ns string) client.Object
	}{
		{trustv1.TrustAnchorKind, func(t *testing.T, ns string) client.Object {
			ta := &trustv1.TrustAnchor{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
				Spec:       trustv1.TrustAnchorSpec{Release: "db", Source: trustv1.SecretKeySource{Name: "db-ca", Key: "ca.crt"}},
			}
			NewWithT(t).Expect(k8sClient.Create(context.Background(), ta)).To(Succeed())
			return ta
		}},
		{trustv1.TrustSourceKind, func(t *testing.T, ns string) client.Object {
			ts := &trustv1.TrustSource{
				ObjectMeta: metav1.ObjectMeta{Name: "metrics-" + ns},
				Spec:       trustv1.TrustSourceSpec{Chart: "none-" + ns, SecretName: "{release}-ca"},
			}
			NewWithT(t).Expect(k8sClient.Create(context.Background(), ts)).To(Succeed())
			return ts
		}},
		{credv1.CredentialAccountKind, func(t *testing.T, ns string) client.Object {
			newHelmRelease(t, ns, "pg", "postgres", nil)
			return newAccount(t, ns, "pg-app", "pg", "app", "scram-sha-256")
		}},
		{credv1.AccountSourceKind, func(t *testing.T, ns string) client.Object {
			src := &credv1.AccountSource{
				ObjectMeta: metav1.ObjectMeta{Name: "metrics-" + ns},
				Spec: credv1.AccountSourceSpec{Chart: "none-" + ns, Sources: []credv1.AccountSourceEntry{
					{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"},
						Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}}},
				}},
			}
			NewWithT(t).Expect(k8sClient.Create(context.Background(), src)).To(Succeed())
			return src
		}},
		{enrollv1.EnrollmentPolicyKind, func(t *testing.T, ns string) client.Object {
			return newPolicy(t, ns, "vms")
		}},
		{enrollv1.WorkloadKind, func(t *testing.T, ns string) client.Object {
			newPolicy(t, ns, "vms")
			return newEnrolledWorkload(t, ns, "vms")
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ns := newTestNamespace(t)
			obj := tc.create(t, ns)
			t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), obj) })

			g.Eventually(func() uint64 {
				n, _ := durationSamples(g, tc.kind, obj.GetNamespace(), obj.GetName())
				return n
			}, 30*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 1),
				"a reconcile of the %s is recorded in gotk_reconcile_duration_seconds", tc.kind)

			g.Expect(k8sClient.Delete(context.Background(), obj)).To(Succeed())
			g.Eventually(func() bool {
				_, found := durationSamples(g, tc.kind, obj.GetNamespace(), obj.GetName())
				return found
			}, 30*time.Second, 100*time.Millisecond).Should(BeFalse(),
				"the series of the deleted %s is dropped", tc.kind)
		})
	}
}

func TestTrustCountersMoveForProjectionsRefusalsAndCollisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newTestNamespace(t)
	written := map[string]string{"namespace": ns}
	refused := map[string]string{"namespace": ns, "reason": trustv1.PrivateKeyDetectedReason}
	g.Expect(counterValue(g, "credo_trust_projections_written_total", written)).To(BeZero())

	newHelmRelease(t, ns, "es", "elasticsearch", nil)
	cert, key := testCA(t, "es-ca")
	src := newSecret(t, ns, "es-ca", publishLabels("es"), nil, map[string][]byte{"ca.crt": cert})
	anchorWith(g, ns, "es", ready)
	g.Expect(counterValue(g, "credo_trust_projections_written_total", written)).To(Equal(1.0),
		"one projection was created")

	src.Data["ca.crt"] = append(append([]byte{}, cert...), key...)
	g.Expect(k8sClient.Update(ctx, src)).To(Succeed())
	anchorWith(g, ns, "es", hasReason(trustv1.SourceRejectedCondition, trustv1.PrivateKeyDetectedReason))
	g.Expect(counterValue(g, "credo_trust_keys_refused_total", refused)).To(BeNumerically(">=", 1))
	g.Expect(counterValue(g, "credo_trust_projections_written_total", written)).To(Equal(1.0),
		"a refused key writes nothing")

	newSecret(t, ns, "nats.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	newHelmRelease(t, ns, "nats", "nats", nil)
	newSecret(t, ns, "nats-ca", publishLabels("nats"), nil, map[string][]byte{"ca.crt": cert})
	anchorWith(g, ns, "nats", hasReason(trustv1.ProjectionFailedCondition, trustv1.NameCollisionReason))
	g.Expect(counterValue(g, "credo_trust_collisions_total", written)).To(BeNumerically(">=", 1))
}

func TestCredentialCountersMoveForSecretsCreatedAndCollisions(t *testing.T) {
	g := NewWithT(t)
	ns := newTestNamespace(t)
	labels := map[string]string{"namespace": ns}
	newHelmRelease(t, ns, "pg", "postgres", nil)
	newAccount(t, ns, "pg-app", "pg", "app", "scram-sha-256")
	accountWith(g, ns, "pg-app", accountReady)
	g.Expect(counterValue(g, "credo_credential_secrets_created_total", labels)).To(Equal(1.0))

	newSecret(t, ns, "pg.other.account", nil, nil, map[string][]byte{"password": []byte("x")})
	newAccount(t, ns, "pg-other", "pg", "other", "scram-sha-256")
	accountWith(g, ns, "pg-other", accountReason(credv1.SecretFailedCondition, credv1.NameCollisionReason))
	g.Expect(counterValue(g, "credo_credential_collisions_total", labels)).To(BeNumerically(">=", 1))
	g.Expect(counterValue(g, "credo_credential_secrets_created_total", labels)).To(Equal(1.0),
		"a foreign Secret is never written")
}
