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
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"

	"github.com/credo-dev/credo/tests/testpki"
)

func TestRefusedPrivateKeyEventNamesTheReleaseAndTheSecretsButNoKey(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewHelmRelease(t, ns, "redis", "redis", nil)
	cert, key := testpki.CA(t, "redis-ca")
	env.NewSecret(t, ns, "redis-ca", testKeys.PublishLabels("redis"), nil,
		map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)})

	e := env.WarningEvent(g, ns, trustv1.TrustAnchorKind, "redis", trustv1.PrivateKeyDetectedReason)
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
	ns := env.NewNamespace(t)
	cert1, _ := testpki.CA(t, "nats-ca-1")
	cert2, _ := testpki.CA(t, "nats-ca-2")
	env.NewSecret(t, ns, "nats-ca-a", testKeys.PublishLabels("nats"), nil, map[string][]byte{"ca.crt": cert1})
	env.NewSecret(t, ns, "nats-ca-b", testKeys.PublishLabels("nats"), nil, map[string][]byte{"ca.crt": cert2})
	env.NewHelmRelease(t, ns, "nats", "nats", nil)

	e := env.WarningEvent(g, ns, trustv1.TrustAnchorKind, "nats", trustv1.AmbiguousSourceReason)
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventReleaseKey, "nats"))
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventProjectionKey, "nats.tenant-ca"))
}
