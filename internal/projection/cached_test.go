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

package projection

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// metadataCache reads a Secret's metadata as the controller's cache holds
// it (through CacheTransform), fresh from the API server and uncounted;
// with frozen set, it answers what it read last, as a lagging cache does.
type metadataCache struct {
	admin  client.Client
	frozen *metav1.PartialObjectMetadata
	gone   bool
}

func (c *metadataCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch {
	case c.gone:
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	case c.frozen != nil:
		c.frozen.DeepCopyInto(obj.(*metav1.PartialObjectMetadata))
		return nil
	}
	if err := c.admin.Get(ctx, key, obj); err != nil {
		return err
	}
	_, err := CacheTransform()(obj)
	return err
}

func (c *metadataCache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	panic("not used")
}

// cachedFixture is a fixture whose writer decides from metadataCache and
// records its echoes.
func cachedFixture(t *testing.T) (*fixture, *metadataCache) {
	f := newFixture(t)
	c := &metadataCache{admin: f.admin}
	f.w.Cache, f.w.Echoes = c, &Echoes{}
	return f, c
}

// freeze makes the cache answer the metadata the projection has now.
func (c *metadataCache) freeze(t *testing.T, f *fixture) {
	t.Helper()
	c.frozen = nil
	var m metav1.PartialObjectMetadata
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Get(f.ctx, f.key(), &m); err != nil {
		t.Fatal(err)
	}
	c.frozen = &m
}

func TestCachedWriteCreatesRotatesAndLeavesBeWithoutReading(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _ := cachedFixture(t)
	cert, next := caCert(t, "pg-ca"), caCert(t, "pg-ca-2")

	res := f.mustWrite(cert)

	g.Expect(res.Changed).To(BeTrue())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"POST": 1}), "absent from the cache: one create, no read")
	s := f.secret()
	g.Expect(s.Annotations).To(HaveKeyWithValue(DigestAnnotation, digest(res.Bundle)))
	g.Expect(f.w.Echo(s)).To(BeTrue(), "the create's watch event is its echo")

	res = f.mustWrite(cert)

	g.Expect(res.Changed).To(BeFalse())
	g.Expect(f.reqs.take()).To(BeEmpty(), "current by its cached metadata: no request")

	res = f.mustWrite(next)

	g.Expect(res.Changed).To(BeTrue())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"PATCH": 1}), "a rotation: one apply, no read")
	s = f.secret()
	g.Expect(s.Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: res.Bundle.PEM}))
	g.Expect(s.Annotations).To(HaveKeyWithValue(DigestAnnotation, digest(res.Bundle)))
	g.Expect(f.w.Echo(s)).To(BeTrue(), "the apply's watch event is its echo")

	// Somebody adds a key: no echo; read, then replaced.
	g.Expect(f.w.Echo(f.update(func(s *corev1.Secret) { s.Data["tls.key"] = []byte("x") }))).To(BeFalse(), "another manager's change is no echo")

	res = f.mustWrite(next)

	g.Expect(res.Changed).To(BeFalse())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "PUT": 1}), "read, then replaced")
	g.Expect(f.w.Echo(f.secret())).To(BeTrue())

	// Somebody removes the owner reference (as the garbage collector
	// orphaning it would): no echo; restored without a read.
	f.update(func(s *corev1.Secret) { s.OwnerReferences = nil })
	g.Expect(f.w.Echo(f.secret())).To(BeFalse(), "a projection without its owner reference is no echo")

	f.mustWrite(next)

	g.Expect(f.reqs.take()).To(Equal(map[string]int{"PATCH": 1}))
	g.Expect(f.secret().OwnerReferences).To(HaveLen(1))

	// Somebody strips the label: no echo; restored without a read.
	f.update(func(s *corev1.Secret) { delete(s.Labels, testLabel) })
	g.Expect(f.w.Echo(f.secret())).To(BeFalse(), "a projection without its label is no echo")

	res = f.mustWrite(next)

	g.Expect(res.Changed).To(BeFalse())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"PATCH": 1}), "a removal adds no manager: the cached metadata settles it")
	g.Expect(f.secret().Labels).To(HaveKeyWithValue(testLabel, "true"))
}

// TestCachedWriteNeverWritesOverWhatItCannotSee: whatever the cached
// metadata says, a foreign Secret is never written, and anyone else's
// change to a projection is read before it is repaired.
func TestCachedWriteNeverWritesOverWhatItCannotSee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// beforeFunc prepares the Secret and the cache.
		beforeFunc func(f *fixture, c *metadataCache, cert []byte)
		wantErr    error
		wantReqs   map[string]int
	}{
		{"a foreign Secret with credo's label and digest is refused", func(f *fixture, _ *metadataCache, _ []byte) {
			s := f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(f.t, "theirs")})
			s.Annotations = map[string]string{DigestAnnotation: "any"}
			if err := f.admin.Update(f.ctx, s, client.FieldOwner(foreignOwner)); err != nil {
				f.t.Fatal(err)
			}
		}, ErrCollision, map[string]int{"GET": 1}},
		{"a foreign Secret the cache has not seen yet is refused", func(f *fixture, c *metadataCache, _ []byte) {
			c.gone = true
			f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(f.t, "theirs")})
		}, ErrCollision, map[string]int{"POST": 1, "GET": 1}},
		{"a projection replaced by a foreign Secret since the cache saw it is refused", func(f *fixture, c *metadataCache, _ []byte) {
			f.mustWrite(caCert(f.t, "pg-ca"))
			c.freeze(f.t, f)
			if err := f.admin.Delete(f.ctx, f.secret()); err != nil {
				f.t.Fatal(err)
			}
			f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(f.t, "theirs")})
		}, ErrCollision, map[string]int{"PATCH": 1, "GET": 1}},
		{"a ca.crt edited by somebody else is read and restored", func(f *fixture, _ *metadataCache, cert []byte) {
			f.mustWrite(cert)
			f.update(func(s *corev1.Secret) { s.Data[trustv1.ProjectionKey] = caCert(f.t, "theirs") })
		}, nil, map[string]int{"GET": 1, "PATCH": 1}},
		{"a ca.crt edited under credo's own field manager is read and restored", func(f *fixture, _ *metadataCache, cert []byte) {
			f.mustWrite(cert)
			forgeEdit(f)
		}, nil, map[string]int{"GET": 1, "PATCH": 1}},
		{"a key added by somebody else is read and removed", func(f *fixture, _ *metadataCache, cert []byte) {
			f.mustWrite(cert)
			f.update(func(s *corev1.Secret) { s.Data["tls.key"] = []byte("smuggled") })
		}, nil, map[string]int{"GET": 1, "PUT": 1}},
		{"a projection the cache has not seen yet is read and left be", func(f *fixture, c *metadataCache, cert []byte) {
			f.mustWrite(cert)
			c.gone = true
		}, nil, map[string]int{"POST": 1, "GET": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			f, c := cachedFixture(t)
			// The same certificate as the last good write, when there was one.
			cert := caCert(t, "pg-ca-2")
			tt.beforeFunc(f, c, cert)
			before := f.secret()

			res, err := f.write(cert)

			g.Expect(f.reqs.take()).To(Equal(tt.wantReqs))
			after := f.secret()
			if tt.wantErr != nil {
				g.Expect(err).To(MatchError(tt.wantErr))
				g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing written")
				g.Expect(after.Data).To(Equal(before.Data))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(after.Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: res.Bundle.PEM}))
		})
	}
}

// forgeEdit changes the projection's ca.crt as an adversary would who
// names credo's field manager on the write and keeps its digest: nothing in
// the metadata but the resourceVersion tells it from credo's own write.
func forgeEdit(f *fixture) *corev1.Secret {
	f.t.Helper()
	s := f.secret()
	s.Data[trustv1.ProjectionKey] = caCert(f.t, "theirs")
	if err := f.admin.Update(f.ctx, s, client.FieldOwner(f.w.FieldOwner)); err != nil {
		f.t.Fatalf("updating the Secret: %v", err)
	}
	return s
}

// An edit under credo's own field manager is no echo: only the
// resourceVersion credo's write was answered with is.
func TestAForgedEditIsNoEcho(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _ := cachedFixture(t)
	f.mustWrite(caCert(t, "pg-ca"))
	g.Expect(f.w.Echo(f.secret())).To(BeTrue())

	g.Expect(f.w.Echo(forgeEdit(f))).To(BeFalse(), "an edit under credo's field manager is no echo")
}

// An event taken for the echo of a write still in flight is checked once
// the write is answered: another version than the write's is doubted, once.
func TestEventsTakenWhileInFlightAreCheckedWhenAnswered(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "tenant", Name: "pg.tenant-ca"}
	ours := written{digest: "d", owner: ownerID{uid: "uid", kind: "HelmRelease"}}
	var e Echoes

	e.expect(key, ours)
	g.Expect(e.tentative(key, "10")).To(BeTrue(), "a write in flight")
	e.answered(key, written{digest: "d", owner: ownerID{uid: "uid", kind: "HelmRelease"}, version: "10"})
	g.Expect(e.doubted(key)).To(BeFalse(), "the event was the write's own")
	g.Expect(e.tentative(key, "11")).To(BeFalse(), "answered: no event is taken on trust")

	e.expect(key, ours)
	g.Expect(e.tentative(key, "12")).To(BeTrue())
	g.Expect(e.tentative(key, "13")).To(BeTrue())
	e.answered(key, written{digest: "d", owner: ownerID{uid: "uid", kind: "HelmRelease"}, version: "12"})
	g.Expect(e.doubted(key)).To(BeTrue(), "version 13 was somebody else's")
	g.Expect(e.doubted(key)).To(BeFalse(), "reported once")
	g.Expect(e.current(key, "12")).To(BeTrue())
}
