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
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/verifier"
)

// A replica whose pod was deleted without a grace period (kubectl delete
// --force, a node's eviction) serves on for the kubelet's two seconds of
// grace over the connections kube-apiserver holds open, while its
// ServiceAccount token, bound to the pod, is already refused. Its answer is
// 503 with Retry-After, which client-go sends again on its own, not a 500;
// and nothing is written. The replica's client is built by NewClient, as
// cmd/credential-controller builds it, with a token bound to a pod that is
// then force-deleted, as the real kube-apiserver refuses it.
func TestAReplicaWhosePodIsGoneAnswersRetryLater(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	before := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "replica", Namespace: ns}}
	g.Expect(platform.Create(ctx, sa)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
	}
	g.Expect(platform.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = platform.Delete(context.Background(), binding) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "replica", Namespace: ns},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa.Name,
			Containers:         []corev1.Container{{Name: "manager", Image: "ghcr.io/credo-dev/credo:latest"}},
		},
	}
	g.Expect(platform.Create(ctx, pod)).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	g.Expect(platform.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := accessapi.NewClient(cfg, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	ops := &accessapi.Operations{Client: c, Keys: keys}
	spec := accessv1.AccountRequestSpec{Account: "db"}

	// The replica serves while its pod is there.
	g.Eventually(func() error {
		_, err := ops.Mint(ctx, ns, spec, "minter")
		return err
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "the replica mints while its pod exists")

	// kube-apiserver may take the token a moment longer, and mint: the
	// Secret is read before each try, to be compared with after the 503.
	g.Expect(platform.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	var status apierrors.APIStatus
	var last error
	var tried *corev1.Secret
	g.Eventually(func() bool {
		tried = secretOf(g, ns, before.Name)
		_, last = ops.Mint(ctx, ns, spec, "minter")
		return errors.As(last, &status) && apierrors.IsServiceUnavailable(last)
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), func() string {
		return fmt.Sprintf("once its pod is gone the replica answers 503; the last answer: %v", last)
	})
	s := status.Status()
	g.Expect(s.Details).NotTo(BeNil())
	g.Expect(s.Details.RetryAfterSeconds).To(BeEquivalentTo(1), "with Retry-After, so that client-go sends it again")
	g.Expect(s.Message).To(ContainSubstring("refused this replica's credentials"))
	g.Expect(strings.Contains(s.Message, tr.Status.Token)).To(BeFalse(), "the token is never in the answer")
	after := secretOf(g, ns, before.Name)
	g.Expect(bytes.Equal(after.Data["password"], tried.Data["password"])).To(BeTrue(), "no password was written (values not printed)")
	g.Expect(after.Annotations[keys.History]).To(Equal(tried.Annotations[keys.History]), "no mint was recorded")

	// Credentials kube-apiserver accepts and RBAC does not: a fault of the
	// install that no retry mends, still answered 500.
	cfg, err = env.UserConfig("replica-without-rbac", nil)
	g.Expect(err).NotTo(HaveOccurred())
	c, err = accessapi.NewClient(cfg, scheme)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = (&accessapi.Operations{Client: c, Keys: keys}).Mint(ctx, ns, spec, "minter")
	g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "a Forbidden read is a 500: %v", err)
}
