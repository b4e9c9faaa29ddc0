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

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// The sample accounts must each get their Secret from the installed
// credential-controller, NotIssued for tenants and Generated for the platform.
func TestSampleCredentialAccounts(t *testing.T) {
	cases := map[string]credv1.Origin{
		"postgres-main-app": credv1.OriginNotIssued,
		"maria-app":         credv1.OriginNotIssued,
		"ch-logs-app":       credv1.OriginNotIssued,
		"ch-logs-root":      credv1.OriginGenerated,
		"web-site-editor":   credv1.OriginNotIssued,
	}
	for name, origin := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			var a credv1.CredentialAccount
			g.Eventually(func() bool {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: name}, &a); err != nil {
					return false
				}
				return conditions.IsReady(&a) && a.Status.Origin == origin
			}, 2*time.Minute, time.Second).Should(BeTrue(), "origin %q, conditions: %+v", a.Status.Origin, a.Status.Conditions)
			var s corev1.Secret
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "tenant-demo", Name: a.Status.SecretName}, &s)).To(Succeed())
			g.Expect(s.Type).To(Equal(corev1.SecretTypeBasicAuth))
			g.Expect(s.Data).To(HaveLen(2))
		})
	}
}
