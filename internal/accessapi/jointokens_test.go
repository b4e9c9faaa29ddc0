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

package accessapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
)

func newEnrollmentPolicy(t *testing.T, ns, name string, revoked bool) *enrollv1.EnrollmentPolicy {
	t.Helper()
	p := &enrollv1.EnrollmentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       enrollv1.EnrollmentPolicySpec{TokenLifetime: &metav1.Duration{Duration: 2 * time.Hour}, Revoked: revoked},
	}
	if err := platform.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func requestToken(ctx context.Context, c client.Client, ns, policy string, lifetime time.Duration) (*accessv1.JoinTokenRequest, error) {
	req := &accessv1.JoinTokenRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "t-"},
		Spec:       accessv1.JoinTokenRequestSpec{Policy: policy, Description: "vm fleet"},
	}
	if lifetime > 0 {
		req.Spec.Lifetime = &metav1.Duration{Duration: lifetime}
	}
	err := c.Create(ctx, req)
	return req, err
}

func TestJoinTokenRequestReturnsTheTokenOnceAndStoresOnlyItsHash(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	p := newEnrollmentPolicy(t, ns, "agents", false)
	user := "enroller-" + rand.String(6)
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"jointokenrequests"}, []string{"create"})
	c := userClient(t, user)

	var req *accessv1.JoinTokenRequest
	g.Eventually(func() error {
		var err error
		req, err = requestToken(ctx, c, ns, p.Name, 0)
		return err
	}, 15*time.Second, 200*time.Millisecond).Should(Succeed())

	tok, err := jointoken.Parse(req.Status.Token)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tok.ID).To(Equal(req.Status.ID))
	g.Expect(req.Status.ExpiresAt.Time).To(BeTemporally("~", time.Now().Add(2*time.Hour), time.Minute), "the policy's lifetime by default")

	var jt enrollv1.JoinToken
	g.Expect(platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: tok.ID}, &jt)).To(Succeed())
	g.Expect(jt.Spec.SecretHash).To(Equal(jointoken.HashSecret(tok.Secret)))
	g.Expect(jt.Spec.Policy).To(Equal(p.Name))
	g.Expect(jt.Spec.CreatedBy).To(Equal(user))
	g.Expect(jt.Spec.Description).To(Equal("vm fleet"))
	g.Expect(jt.OwnerReferences).To(HaveLen(1))
	g.Expect(jt.OwnerReferences[0].UID).To(Equal(p.UID), "the token goes with its policy")
	raw, _ := json.Marshal(jt)
	g.Expect(string(raw)).NotTo(ContainSubstring(tok.Secret), "the record holds no secret")
	g.Expect(env.Logs.String()).NotTo(ContainSubstring(tok.Secret), "no log line holds the secret")

	// A shorter lifetime is honoured; a longer one is refused.
	short, err := requestToken(ctx, c, ns, p.Name, 10*time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(short.Status.ExpiresAt.Time).To(BeTemporally("~", time.Now().Add(10*time.Minute), time.Minute))
	_, err = requestToken(ctx, c, ns, p.Name, 3*time.Hour)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("tokenLifetime"))
}

func TestJoinTokenRequestRefusals(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	newEnrollmentPolicy(t, ns, "agents", false)
	newEnrollmentPolicy(t, ns, "stopped", true)

	stranger := userClient(t, "stranger-"+rand.String(6))
	_, err := requestToken(ctx, stranger, ns, "agents", 0)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a user without create jointokenrequests: %v", err)

	user := "enroller-" + rand.String(6)
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"jointokenrequests"}, []string{"create"})
	c := userClient(t, user)
	g.Eventually(func() bool {
		_, err := requestToken(ctx, c, ns, "missing", 0)
		return apierrors.IsNotFound(err)
	}, 15*time.Second, 200*time.Millisecond).Should(BeTrue(), "a missing policy is 404")
	_, err = requestToken(ctx, c, ns, "stopped", 0)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(strings.Contains(err.Error(), "revoked")).To(BeTrue(), "the refusal says why: %v", err)

	// A policy the enrollment-controller found over the platform's maxima
	// mints nothing (its condition, as the controller writes it).
	newEnrollmentPolicy(t, ns, "too-long", false)
	var over enrollv1.EnrollmentPolicy
	g.Expect(platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: "too-long"}, &over)).To(Succeed())
	conditions.MarkStalled(&over, enrollv1.ExceedsPlatformLimitReason, "certificateTTL 2000h is over --max-certificate-ttl 168h")
	g.Expect(platform.Status().Update(ctx, &over)).To(Succeed())
	_, err = requestToken(ctx, c, ns, "too-long", 0)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("exceeds the platform's limits"))

	var list enrollv1.JoinTokenList
	g.Expect(platform.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(BeEmpty(), "no refused request left a record")
}

// A lifetime that is not positive is refused as an invalid field, sent as
// the API receives it ("0s", "-1h"): it never falls back to the policy's
// lifetime. A longer one than the policy's is invalid too.
func TestJoinTokenRequestRefusesALifetimeThatIsNotPositive(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	newEnrollmentPolicy(t, ns, "agents", false)
	user := "enroller-" + rand.String(6)
	grant(t, ns, user, accessv1.GroupVersion.Group, []string{"jointokenrequests"}, []string{"create"})
	c := userClient(t, user)
	NewWithT(t).Eventually(func() error {
		_, err := requestToken(ctx, c, ns, "agents", 0)
		return err
	}, 15*time.Second, 200*time.Millisecond).Should(Succeed())

	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		message  string
	}{
		{"zero", 0, "must be positive"},
		{"negative", -time.Hour, "must be positive"},
		{"longer than the policy's", 3 * time.Hour, "must be at most the policy's tokenLifetime (2h0m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			req := &accessv1.JoinTokenRequest{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "t-"},
				Spec:       accessv1.JoinTokenRequestSpec{Policy: "agents", Lifetime: &metav1.Duration{Duration: tc.lifetime}},
			}
			err := c.Create(ctx, req)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "422, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.lifetime"))
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
			g.Expect(req.Status.Token).To(BeEmpty())
		})
	}
	var list enrollv1.JoinTokenList
	NewWithT(t).Expect(platform.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	NewWithT(t).Expect(list.Items).To(HaveLen(1), "only the first, valid request left a record")
}
