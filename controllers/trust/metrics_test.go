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

package trust

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

func TestEveryReconcilerRecordsItsDurationAndDropsItWhenTheObjectIsGone(t *testing.T) {
	env.RecordsDurationAndDropsIt(t, []testenv.DurationCase{
		{Kind: trustv1.TrustAnchorKind, Create: func(t *testing.T, ns string) client.Object {
			ta := &trustv1.TrustAnchor{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
				Spec:       trustv1.TrustAnchorSpec{Release: "db", Source: trustv1.SecretKeySource{Name: "db-ca", Key: "ca.crt"}},
			}
			NewWithT(t).Expect(env.Client.Create(context.Background(), ta)).To(Succeed())
			return ta
		}},
		{Kind: trustv1.TrustSourceKind, Create: func(t *testing.T, ns string) client.Object {
			ts := &trustv1.TrustSource{
				ObjectMeta: metav1.ObjectMeta{Name: "metrics-" + ns},
				Spec:       trustv1.TrustSourceSpec{Chart: "none-" + ns, SecretName: "{release}-ca"},
			}
			NewWithT(t).Expect(env.Client.Create(context.Background(), ts)).To(Succeed())
			return ts
		}},
	})
}

func TestTrustCountersMoveForProjectionsRefusalsAndCollisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	written := map[string]string{"namespace": ns}
	refused := map[string]string{"namespace": ns, "reason": trustv1.PrivateKeyDetectedReason}
	g.Expect(testenv.CounterValue(g, "credo_trust_projections_written_total", written)).To(BeZero())

	env.NewHelmRelease(t, ns, "es", "elasticsearch", nil)
	cert, key := testpki.CA(t, "es-ca")
	src := env.NewSecret(t, ns, "es-ca", testKeys.PublishLabels("es"), nil, map[string][]byte{"ca.crt": cert})
	anchorWith(g, ns, "es", ready)
	g.Expect(testenv.CounterValue(g, "credo_trust_projections_written_total", written)).To(Equal(1.0),
		"one projection was created")

	src.Data["ca.crt"] = append(append([]byte{}, cert...), key...)
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	anchorWith(g, ns, "es", hasReason(trustv1.SourceRejectedCondition, trustv1.PrivateKeyDetectedReason))
	g.Expect(testenv.CounterValue(g, "credo_trust_keys_refused_total", refused)).To(BeNumerically(">=", 1))
	g.Expect(testenv.CounterValue(g, "credo_trust_projections_written_total", written)).To(Equal(1.0),
		"a refused key writes nothing")

	env.NewSecret(t, ns, "nats.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	env.NewHelmRelease(t, ns, "nats", "nats", nil)
	env.NewSecret(t, ns, "nats-ca", testKeys.PublishLabels("nats"), nil, map[string][]byte{"ca.crt": cert})
	anchorWith(g, ns, "nats", hasReason(trustv1.ProjectionFailedCondition, trustv1.NameCollisionReason))
	g.Expect(testenv.CounterValue(g, "credo_trust_collisions_total", written)).To(BeNumerically(">=", 1))
}
