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
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// A mint through kube-apiserver returns a password whose verifier the
// sample ClickHouse account's Secret then holds.
func TestMintThroughKubeAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var a credv1.CredentialAccount
	g.Eventually(func() bool {
		return k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: "ch-logs-app"}, &a) == nil && conditions.IsReady(&a)
	}, 2*time.Minute, time.Second).Should(BeTrue())

	m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: "ch-logs-app"}}
	m.Namespace = "tenant-demo"
	g.Eventually(func() error { return k8s.Create(ctx, m) }, time.Minute, time.Second).Should(Succeed())
	g.Expect(len(m.Status.Password) >= 32).To(BeTrue(), "a password of at least 32 characters")

	var s corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: m.Status.SecretName}, &s)).To(Succeed())
	sum := sha256.Sum256([]byte(m.Status.Password))
	g.Expect(string(s.Data["password"]) == hex.EncodeToString(sum[:])).To(BeTrue(), "the Secret holds the verifier of the minted password")
	g.Expect(s.Annotations["credentials.cozystack.io/origin"]).To(Equal("Minted"))
}
