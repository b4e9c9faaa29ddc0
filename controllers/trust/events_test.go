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
	"strconv"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	hr := env.NewHelmRelease(t, ns, "nats", "nats", nil)

	e := env.WarningEvent(g, ns, trustv1.TrustAnchorKind, "nats", trustv1.AmbiguousSourceReason)
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventReleaseKey, "nats"))
	g.Expect(e.Annotations).To(HaveKeyWithValue(trustv1.EventProjectionKey, "nats.tenant-ca"))
	onRelease := env.ReleaseWarning(g, hr, trustv1.AmbiguousSourceReason)
	g.Expect(onRelease.Message).To(Equal(e.Message), "the claims, on the HelmRelease too")
}

// Every Warning about a release is recorded on its HelmRelease too, where
// `flux events --for HelmRelease/<name>` and `kubectl describe helmrelease`
// look: the same reason, message and metadata as on the TrustAnchor, once
// per transition like it, and no key material.
func TestWarningsAboutAReleaseAreAlsoOnItsHelmRelease(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t)
	env.NewSecret(t, ns, "nats.tenant-ca", nil, nil, map[string][]byte{"ca.crt": []byte("someone else's")})
	nats := env.NewHelmRelease(t, ns, "nats", "nats", nil)
	natsCert, _ := testpki.CA(t, "nats-ca")
	env.NewSecret(t, ns, "nats-ca", testKeys.PublishLabels("nats"), nil, map[string][]byte{"ca.crt": natsCert})
	redis := env.NewHelmRelease(t, ns, "redis", "redis", nil)
	cert, key := testpki.CA(t, "redis-ca")
	env.NewSecret(t, ns, "redis-ca", testKeys.PublishLabels("redis"), nil,
		map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)})

	for hr, reason := range map[*helmv2.HelmRelease]string{
		nats:  trustv1.NameCollisionReason,
		redis: trustv1.PrivateKeyDetectedReason,
	} {
		onRelease := env.ReleaseWarning(g, hr, reason)
		onAnchor := env.WarningEvent(g, ns, trustv1.TrustAnchorKind, hr.Name, reason)
		g.Expect(onRelease.Message).To(Equal(onAnchor.Message))
		g.Expect(onRelease.Annotations).To(Equal(onAnchor.Annotations))
		g.Expect(onRelease.Annotations).To(HaveKeyWithValue(trustv1.EventReleaseKey, hr.Name))
		g.Expect(onRelease.Source.Component).To(Equal(onAnchor.Source.Component), "recorded by the trust-controller")
		all := onRelease.Message
		for k, v := range onRelease.Annotations {
			all += k + v
		}
		g.Expect(all).NotTo(ContainSubstring("PRIVATE KEY"))
		g.Expect(all).NotTo(ContainSubstring(strings.TrimSpace(strings.Split(string(key), "\n")[1])), "no line of the key")

		// Reconciles that find the same failure record nothing more, on
		// either object.
		for range 3 {
			requestReconcile(g, ns, hr.Name)
		}
		for _, kind := range []string{helmv2.HelmReleaseKind, trustv1.TrustAnchorKind} {
			g.Consistently(func() int32 { return env.WarningCount(g, ns, kind, hr.Name, reason) }, 2*time.Second, 200*time.Millisecond).
				Should(Equal(int32(1)), "one %s Warning on %s %s", reason, kind, hr.Name)
		}
	}
}

// requestReconcile asks for a reconcile of the TrustAnchor of release, as
// `flux reconcile` does, and waits until it is handled.
func requestReconcile(g Gomega, ns, release string) {
	ctx := context.Background()
	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	ta := anchorWith(g, ns, release, func(*trustv1.TrustAnchor) bool { return true })
	patch := client.MergeFrom(ta.DeepCopy())
	metav1.SetMetaDataAnnotation(&ta.ObjectMeta, meta.ReconcileRequestAnnotation, token)
	g.Expect(env.Client.Patch(ctx, ta, patch)).To(Succeed())
	anchorWith(g, ns, release, func(ta *trustv1.TrustAnchor) bool { return ta.Status.LastHandledReconcileAt == token })
}
