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
	"time"

	. "github.com/onsi/gomega"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

func projectionOf(g Gomega, ns, release string) *corev1.Secret {
	var s corev1.Secret
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release + trustv1.ProjectionSuffix}, &s)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return &s
}

// gone waits until the object ns/name is deleted. msgAndArgs, if given,
// replace the default failure message.
func gone(g Gomega, obj client.Object, ns, name string, msgAndArgs ...any) {
	if len(msgAndArgs) == 0 {
		msgAndArgs = []any{"%T %s/%s is deleted", obj, ns, name}
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj))
	}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), msgAndArgs...)
}

func anchorWith(g Gomega, ns, release string, match func(*trustv1.TrustAnchor) bool) *trustv1.TrustAnchor {
	var ta trustv1.TrustAnchor
	g.Eventually(func() bool {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release}, &ta); err != nil {
			return false
		}
		return match(&ta)
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue(), "TrustAnchor %s/%s conditions: %+v", ns, release, &ta.Status.Conditions)
	return &ta
}

func ready(ta *trustv1.TrustAnchor) bool {
	return conditions.IsReady(ta) && ta.Status.ObservedGeneration == ta.Generation
}

func hasReason(cond, reason string) func(*trustv1.TrustAnchor) bool {
	return func(ta *trustv1.TrustAnchor) bool {
		return conditions.IsTrue(ta, cond) && conditions.GetReason(ta, cond) == reason
	}
}
