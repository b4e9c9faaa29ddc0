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
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/sourcecache"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// TestSourceCacheHoldsOnlyTheCertificatesOfLabelledSources builds the cache
// of label-leg sources as Setup builds it for the binary, on the real
// control plane, and reads back what it holds: of a labelled source only
// its certificates (no private key, no other key, no managed fields, no
// last-applied copy of the data); of a labelled Secret whose published key
// holds a private key, nothing of its data; of an unlabelled Secret,
// nothing at all.
func TestSourceCacheHoldsOnlyTheCertificatesOfLabelledSources(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := testenv.NewSetup(env.Config, env.Scheme, ControllerName, ConfigureCache)
	g.Expect(err).NotTo(HaveOccurred())
	sources, err := sourcecache.New(s.Manager, testKeys)
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = s.Manager.Start(ctx) }()

	ns := env.NewNamespace(t)
	cert, key := testpki.CA(t, "cached-ca")
	lastApplied := `{"data":{"ca.key":"` + string(key) + `"}}`
	env.NewSecret(t, ns, "published", testKeys.PublishLabels("db"),
		map[string]string{corev1.LastAppliedConfigAnnotation: lastApplied},
		map[string][]byte{"ca.crt": cert, "ca.key": key, "tls.key": key})
	env.NewSecret(t, ns, "keyed", testKeys.PublishLabels("cache"), nil,
		map[string][]byte{"ca.crt": append(append([]byte{}, cert...), key...)})
	env.NewSecret(t, ns, "unlabelled", nil, nil, map[string][]byte{"ca.crt": cert, "ca.key": key})

	var published corev1.Secret
	g.Eventually(func() error {
		return sources.Get(ctx, client.ObjectKey{Namespace: ns, Name: "published"}, &published)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	// Gomega would print the data of a failing match: compare without it.
	g.Expect(slices.Sorted(maps.Keys(published.Data))).To(Equal([]string{"ca.crt"}))
	g.Expect(bytes.Equal(published.Data["ca.crt"], cert)).To(BeTrue(), "the certificate is cached as published")
	g.Expect(len(published.ManagedFields)).To(BeZero(), "managed fields are not cached")
	_, lastAppliedKept := published.Annotations[corev1.LastAppliedConfigAnnotation]
	g.Expect(lastAppliedKept).To(BeFalse(), "kubectl's copy of the data is not cached")

	var keyed corev1.Secret
	g.Eventually(func() error {
		return sources.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keyed"}, &keyed)
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(len(keyed.Data)).To(BeZero(), "a published value with a private key is not cached")
	_, settled := sourcecache.Value(ctx, sources, client.ObjectKey{Namespace: ns, Name: "keyed"}, "ca.crt")
	g.Expect(settled).To(BeFalse(), "the reconciler reads such a source uncached, to say why it is refused")

	// The unlabelled Secret was created after the labelled ones: once they
	// are cached, a watch holding it would have delivered it too.
	g.Consistently(func() bool {
		err := sources.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unlabelled"}, &corev1.Secret{})
		return apierrors.IsNotFound(err)
	}, 2*time.Second, 100*time.Millisecond).Should(BeTrue())

	var list corev1.SecretList
	g.Expect(sources.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	for _, sec := range list.Items {
		for _, v := range sec.Data {
			g.Expect(bytes.Contains(v, []byte("PRIVATE KEY"))).To(BeFalse(), "Secret %s holds a private key", sec.Name)
		}
	}
}
