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

package credentials

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/tests/testenv"
)

func TestEveryReconcilerRecordsItsDurationAndDropsItWhenTheObjectIsGone(t *testing.T) {
	env.RecordsDurationAndDropsIt(t, []testenv.DurationCase{
		{Kind: credv1.CredentialAccountKind, Create: func(t *testing.T, ns string) client.Object {
			env.NewHelmRelease(t, ns, "pg", "postgres", nil)
			return newAccount(t, ns, "pg-app", "pg", "app", "scram-sha-256")
		}},
		{Kind: credv1.AccountSourceKind, Create: func(t *testing.T, ns string) client.Object {
			src := &credv1.AccountSource{
				ObjectMeta: metav1.ObjectMeta{Name: "metrics-" + ns},
				Spec: credv1.AccountSourceSpec{Chart: "none-" + ns, Sources: []credv1.AccountSourceEntry{
					{Kind: credv1.SourceStatic, Static: &credv1.StaticSource{Username: "app"},
						Template: credv1.AccountTemplate{Format: credv1.Format{Name: "scram-sha-256"}}},
				}},
			}
			NewWithT(t).Expect(env.Client.Create(context.Background(), src)).To(Succeed())
			return src
		}},
	})
}

func TestCredentialCountersMoveForSecretsCreatedAndCollisions(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	labels := map[string]string{"namespace": ns}
	env.NewHelmRelease(t, ns, "pg", "postgres", nil)
	newAccount(t, ns, "pg-app", "pg", "app", "scram-sha-256")
	accountWith(g, ns, "pg-app", accountReady)
	g.Expect(testenv.CounterValue(g, "credo_credential_secrets_created_total", labels)).To(Equal(1.0))

	env.NewSecret(t, ns, "pg.other.account", nil, nil, map[string][]byte{"password": []byte("x")})
	newAccount(t, ns, "pg-other", "pg", "other", "scram-sha-256")
	accountWith(g, ns, "pg-other", accountReason(credv1.SecretFailedCondition, credv1.NameCollisionReason))
	g.Expect(testenv.CounterValue(g, "credo_credential_collisions_total", labels)).To(BeNumerically(">=", 1))
	g.Expect(testenv.CounterValue(g, "credo_credential_secrets_created_total", labels)).To(Equal(1.0),
		"a foreign Secret is never written")
}
