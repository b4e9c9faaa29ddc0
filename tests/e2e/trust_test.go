//go:build e2e

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

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// The samples hold one anchor of every kind; the installed trust-controller
// must report each as the docs say.
func TestSampleTrustAnchors(t *testing.T) {
	cases := []struct {
		release string
		leg     trustv1.Leg
		reason  string // Ready's reason
		ready   bool
	}{
		{release: "postgres-main", leg: trustv1.LegTrustSource, reason: meta.SucceededReason, ready: true},
		{release: "kafka-events", leg: trustv1.LegLabel, reason: meta.SucceededReason, ready: true},
		{release: "redis-cache", leg: trustv1.LegDeclared, reason: meta.SucceededReason, ready: true},
		{release: "nats-bus", leg: trustv1.LegLabel, reason: trustv1.NameCollisionReason},
		{release: "search", leg: trustv1.LegLabel, reason: trustv1.PrivateKeyDetectedReason},
	}
	for _, tc := range cases {
		t.Run(tc.release, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			var ta trustv1.TrustAnchor
			g.Eventually(func() string {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: tc.release}, &ta); err != nil {
					return err.Error()
				}
				return conditions.GetReason(&ta, meta.ReadyCondition)
			}, 2*time.Minute, time.Second).Should(Equal(tc.reason))
			g.Expect(ta.Status.Leg).To(Equal(tc.leg))
			g.Expect(conditions.IsReady(&ta)).To(Equal(tc.ready))
			if !tc.ready {
				return
			}
			var p corev1.Secret
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: tc.release + ".tenant-ca"}, &p)).To(Succeed())
			g.Expect(p.Data).To(HaveLen(1))
			g.Expect(p.Data).To(HaveKey("ca.crt"))
			g.Expect(string(p.Data["ca.crt"])).NotTo(ContainSubstring("PRIVATE KEY"))
		})
	}
}
