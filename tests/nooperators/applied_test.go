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

package nooperators

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/accessapi"
)

// Without the operators' CRDs the credential-controller starts, says in
// its log that it does not observe them (a restart observes them once
// installed), and a minted account whose Secret only they could read is
// Applied Unknown EngineNotObserved, naming them, and still Ready.
func TestAppliedWithoutOperatorCRDsIsEngineNotObserved(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	acct := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-app", Namespace: ns},
		Spec:       credv1.CredentialAccountSpec{Release: "pg", Username: "app", Format: credv1.Format{Name: "scram-sha-256"}},
	}
	g.Expect(env.Client.Create(ctx, acct)).To(Succeed())
	key := client.ObjectKeyFromObject(acct)
	g.Eventually(func() bool {
		return env.Client.Get(ctx, key, acct) == nil && conditions.IsReady(acct)
	}, 20*time.Second, 100*time.Millisecond).Should(BeTrue())

	ops := &accessapi.Operations{Client: env.Client, Keys: credentials.NewAccountKeys("credentials.cozystack.io")}
	res, err := ops.Mint(ctx, ns, accessv1.AccountRequestSpec{Account: "pg-app"}, "alice")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() string {
		g.Expect(env.Client.Get(ctx, key, acct)).To(Succeed())
		return conditions.GetReason(acct, credv1.AppliedCondition)
	}, 20*time.Second, 100*time.Millisecond).Should(Equal(credv1.EngineNotObservedReason))
	g.Expect(conditions.IsUnknown(acct, credv1.AppliedCondition)).To(BeTrue())
	g.Expect(conditions.GetMessage(acct, credv1.AppliedCondition)).To(ContainSubstring(
		"not observed: CloudNativePG, mariadb-operator (CRD not installed when the credential-controller started)"))
	g.Expect(conditions.IsReady(acct)).To(BeTrue(), "Applied is no part of Ready")

	logs := env.Logs.String()
	g.Expect(logs).To(ContainSubstring("not observing CloudNativePG for the Applied condition"))
	g.Expect(logs).To(ContainSubstring("not observing mariadb-operator for the Applied condition"))
	g.Expect(strings.Contains(logs, res.Password)).To(BeFalse(), "the minted password is in no log line (not printed)")
}
