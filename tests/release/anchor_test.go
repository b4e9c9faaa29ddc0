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

package release

import (
	"context"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// enrollmentCAPublished checks what an install through Flux publishes with
// no HelmRelease at all: the enrollment-controller, under its shipped
// identity, declares the TrustAnchor credo for its embedded CA, and the
// trust-controller projects credo.tenant-ca, ca.crt alone, owned by that
// TrustAnchor.
func enrollmentCAPublished(g Gomega) {
	ctx := context.Background()
	var hrs metav1.PartialObjectMetadataList
	hrs.SetGroupVersionKind(helmv2.GroupVersion.WithKind("HelmReleaseList"))
	g.Expect(env.Client.List(ctx, &hrs, client.InNamespace("credo-system"))).To(Succeed())
	g.Expect(hrs.Items).To(BeEmpty(), "the install has no HelmRelease")

	var ta trustv1.TrustAnchor
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "credo-system", Name: "credo"}, &ta)).To(Succeed())
		g.Expect(conditions.IsReady(&ta)).To(BeTrue(), "%+v", ta.Status.Conditions)
	}, time.Minute, 250*time.Millisecond).Should(Succeed(), "the enrollment CA's TrustAnchor is Ready")
	g.Expect(ta.Status.Leg).To(Equal(trustv1.LegDeclared))
	g.Expect(ta.GetOwnerKind()).To(Equal(trustv1.OwnerTrustAnchor))

	var p corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "credo-system", Name: "credo" + trustv1.ProjectionSuffix}, &p)).To(Succeed())
	g.Expect(p.Data).To(HaveLen(1))
	g.Expect(p.Data).To(HaveKey(trustv1.ProjectionKey))
	g.Expect(p.OwnerReferences).To(ConsistOf(HaveField("UID", ta.UID)))
}
