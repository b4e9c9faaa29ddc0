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
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
)

// tokenReadyOf returns "<status>/<reason>" of the token's Ready condition,
// "" before it has one.
func tokenReadyOf(g Gomega, jt *enrollv1.JoinToken) func() string {
	return func() string {
		var cur enrollv1.JoinToken
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(jt), &cur)).To(Succeed())
		c := apimeta.FindStatusCondition(cur.Status.Conditions, meta.ReadyCondition)
		if c == nil {
			return ""
		}
		return string(c.Status) + "/" + c.Reason
	}
}

// Each join token carries Ready, as `kubectl get jointokens` shows it: True
// while it can enroll, False once revoked, expired (on time), or its policy
// revoked.
func TestJoinTokensCarryReady(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, "agents")
	now := time.Now()
	usable := newJoinToken(t, ns, p.Name, now.Add(time.Hour), false)
	soon := newJoinToken(t, ns, p.Name, now.Add(4*time.Second), false)
	revoked := newJoinToken(t, ns, p.Name, now.Add(time.Hour), true)
	expired := newJoinToken(t, ns, p.Name, now.Add(-time.Minute), false)

	g.Eventually(tokenReadyOf(g, usable), 20*time.Second, 200*time.Millisecond).Should(Equal("True/Usable"))
	g.Eventually(tokenReadyOf(g, revoked), 20*time.Second, 200*time.Millisecond).Should(Equal("False/Revoked"))
	g.Eventually(tokenReadyOf(g, expired), 20*time.Second, 200*time.Millisecond).Should(Equal("False/Expired"))
	g.Expect(tokenReadyOf(g, soon)()).To(Equal("True/Usable"))
	g.Eventually(tokenReadyOf(g, soon), 20*time.Second, 200*time.Millisecond).Should(Equal("False/Expired"), "marked when it expires")

	var cur enrollv1.JoinToken
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(usable), &cur)).To(Succeed())
	c := apimeta.FindStatusCondition(cur.Status.Conditions, meta.ReadyCondition)
	g.Expect(c.Message).To(Equal("enrolls until " + usable.Spec.ExpiresAt.UTC().Format(time.RFC3339)))

	revokePolicy := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"revoked":true}}`))
	g.Expect(env.Client.Patch(ctx, &enrollv1.EnrollmentPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}}, revokePolicy)).To(Succeed())
	g.Eventually(tokenReadyOf(g, usable), 20*time.Second, 200*time.Millisecond).Should(Equal("False/PolicyRevoked"))
	g.Expect(env.Client.Patch(ctx, usable, revokePolicy)).To(Succeed())
	g.Eventually(tokenReadyOf(g, usable), 20*time.Second, 200*time.Millisecond).Should(Equal("False/Revoked"))
}
