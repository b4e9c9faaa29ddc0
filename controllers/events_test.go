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

package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// warningEvent waits for the Warning event of reason on the named object of
// kind and returns it: its annotations are the metadata the Flux recorder
// also posts to notification-controller.
func warningEvent(g Gomega, ns, kind, name, reason string) corev1.Event {
	var found corev1.Event
	g.Eventually(func() bool {
		var list corev1.EventList
		if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name &&
				e.Type == corev1.EventTypeWarning && e.Reason == reason {
				found = e
				return true
			}
		}
		return false
	}, 15*time.Second, 100*time.Millisecond).Should(BeTrue(), "a %s Warning on %s %s/%s", reason, kind, ns, name)
	return found
}

func TestRefusedPrivateKeyEventNamesTheReleaseAndTheSecretsButNoKey(t *testing.T) {
	g := NewWithT(t)
	ns := newTestNamespace(t)
	newHelmRelease(t, ns, "redis", "redis", nil)
	cert, key := testCA(t, "redis-ca")
	newSecret(t, ns, "redis-ca", publishLabels("redis"), nil,
		map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)})

	e := warningEvent(g, ns, trustv1.TrustAnchorKind, "redis", trustv1.PrivateKeyDetectedReason)
	g.Expect(e.Annotations).To(And(
		HaveKeyWithValue(trustv1.EventReleaseKey, "redis"),
		HaveKeyWithValue(trustv1.EventSourceKey, "redis-ca"),
		HaveKeyWithValue(trustv1.EventSourceKeyKey, "ca.crt"),
		HaveKeyWithValue(trustv1.EventProjectionKey, "redis.tenant-ca"),
		HaveKeyWithValue(trustv1.EventLegKey, string(trustv1.LegLabel)),
	))
	for k := range e.Annotations {
		g.Expect(k).To(HavePrefix(trustv1.GroupVersion.Group+"/"), "notification-controller keeps only keys of the object's group")
	}
	all := e.Message
	for k, v := range e.Annotations {
		all += k + v
	}
	g.Expect(all).NotTo(ContainSubstring("PRIVATE KEY"))
	g.Expect(all).NotTo(ContainSubstring(strings.TrimSpace(strings.Split(string(key), "\n")[1])), "no line of the key")
}

func TestAmbiguousSourceEventNamesTheRelease(t *testing.T) {
	g := NewWithT(t)
	ns := newTestNamespace(t)
	cert1, _ := testCA(t, "nats-ca-1")
	cert2, _ := testCA(t, "nats-ca-2")
	newSecret(t, ns, "nats-ca-a", publishLabels("nats"), nil, map[string][]byte{"ca.crt": cert1})
	newSecret(t, ns, "nats-ca-b", publishLabels("nats"), nil, map[string][]byte{"ca.crt": cert2})
	newHelmRelease(t, ns, "nats", "nats", nil)

	e := warningEvent(g, ns, trustv1.TrustAnchorKind, "nats", trustv1.AmbiguousSourceReason)
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventReleaseKey, "nats"))
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventProjectionKey, "nats.tenant-ca"))
}

func TestAccountCollisionEventNamesTheAccountAndItsSecret(t *testing.T) {
	g := NewWithT(t)
	ns := newTestNamespace(t)
	newHelmRelease(t, ns, "shop", "mariadb", nil)
	newAccount(t, ns, "first", "shop", "Shop_User", "mysql-native")
	newAccount(t, ns, "second", "shop", "shop.user", "mysql-native")

	e := warningEvent(g, ns, credv1.CredentialAccountKind, "second", credv1.AccountCollisionReason)
	g.Expect(e.Annotations).To(And(
		HaveKeyWithValue(credv1.EventReleaseKey, "shop"),
		HaveKeyWithValue(credv1.EventUsernameKey, "shop.user"),
		HaveKeyWithValue(credv1.EventSecretKey, "shop.shop-user"+credv1.AccountSecretSuffix),
		HaveKeyWithValue(credv1.EventOwnerKey, string(credv1.OwnerTenant)),
	))
}
