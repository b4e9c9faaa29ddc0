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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/tests/testpki"
)

// foreignOwner is the field manager of everything the tests write as
// somebody else.
const foreignOwner = "somebody-else"

// fixture is one test's namespace on the control plane, a writer whose
// requests for Secrets are counted, and the release it projects for.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	admin   client.Client
	ns      string
	release *helmv2.HelmRelease
	w       *Writer
	reqs    *requests
}

func newFixture(t *testing.T) *fixture {
	t.Helper()

	reqs := &requests{counts: map[string]int{}}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(reqs.wrap)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme, Mapper: env.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		t: t, ctx: context.Background(), admin: env.Client, reqs: reqs,
		ns: "projection-" + utilrand.String(8), release: newRelease("pg"),
		w: &Writer{Client: c, Reader: c, FieldOwner: testFieldOwner, TenantCALabel: testLabel},
	}
	if err := env.Client.Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return f
}

// write projects raw for the fixture's release, counting the requests from
// here on.
func (f *fixture) write(raw []byte) (*Result, error) {
	f.reqs.take()
	return f.w.Write(f.ctx, f.ns, ReleaseOwner(f.release), raw)
}

// mustWrite writes raw and fails the test on an error.
func (f *fixture) mustWrite(raw []byte) *Result {
	f.t.Helper()
	res, err := f.write(raw)
	if err != nil {
		f.t.Fatalf("writing the projection: %v", err)
	}
	return res
}

func (f *fixture) key() client.ObjectKey {
	return client.ObjectKey{Namespace: f.ns, Name: f.release.Name + trustv1.ProjectionSuffix}
}

// secret reads the projection's Secret as it is now.
func (f *fixture) secret() *corev1.Secret {
	f.t.Helper()
	var s corev1.Secret
	if err := f.admin.Get(f.ctx, f.key(), &s); err != nil {
		f.t.Fatalf("reading the Secret: %v", err)
	}
	return &s
}

// createForeign creates a Secret of the projection's name as somebody else.
func (f *fixture) createForeign(data map[string][]byte) *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.key().Name, Labels: map[string]string{testLabel: "true"}},
		Data:       data,
	}
	if err := f.admin.Create(f.ctx, s, client.FieldOwner(foreignOwner)); err != nil {
		f.t.Fatalf("creating the foreign Secret: %v", err)
	}
	return s
}

// update changes the Secret as somebody else.
func (f *fixture) update(mutate func(*corev1.Secret)) *corev1.Secret {
	f.t.Helper()
	s := f.secret()
	mutate(s)
	if err := f.admin.Update(f.ctx, s, client.FieldOwner(foreignOwner)); err != nil {
		f.t.Fatalf("updating the Secret: %v", err)
	}
	return s
}

// readStale makes the writer read snapshot from now on, as if it had read
// the Secret before the changes the test makes next; nil reads NotFound.
func (f *fixture) readStale(snapshot *corev1.Secret) {
	f.w.Reader = staleReader{snapshot: snapshot}
}

type staleReader struct {
	client.Reader
	snapshot *corev1.Secret
}

func (r staleReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.snapshot == nil {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	r.snapshot.DeepCopyInto(obj.(*corev1.Secret))
	return nil
}

// hasEntry reports whether s has a managedFields entry of manager for op.
func hasEntry(s *corev1.Secret, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, e := range s.ManagedFields {
		if e.Manager == manager && e.Operation == op {
			return true
		}
	}
	return false
}

func TestWriteCreatesTheProjectionThenLeavesItBe(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	cert := caCert(t, "pg-ca")

	res := f.mustWrite(cert)

	g.Expect(res.Changed).To(BeTrue())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "POST": 1}), "one read, one create")
	s := f.secret()
	g.Expect(s.Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: res.Bundle.PEM}))
	g.Expect(s.Labels).To(HaveKeyWithValue(testLabel, "true"))
	g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(f.w.metadataCurrent(s, digest(res.Bundle), ownerID{uid: f.release.UID, kind: helmv2.HelmReleaseKind})).To(BeTrue(), "owner-referenced to the release, with its digest")
	g.Expect(hasEntry(s, testFieldOwner, metav1.ManagedFieldsOperationUpdate)).To(BeTrue(), "created under credo's field manager")

	res = f.mustWrite(cert)

	g.Expect(res.Changed).To(BeFalse())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1}), "a current projection is read, not written")
	g.Expect(f.secret().ResourceVersion).To(Equal(s.ResourceVersion))
}

func TestWriteAppliesUnderTheFieldManager(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	f.mustWrite(caCert(t, "pg-ca"))
	next := caCert(t, "pg-ca-2")

	res := f.mustWrite(next)

	g.Expect(res.Changed).To(BeTrue())
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "PATCH": 1}), "one read, one apply, no dry-run")
	s := f.secret()
	g.Expect(s.Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: res.Bundle.PEM}))
	g.Expect(hasEntry(s, testFieldOwner, metav1.ManagedFieldsOperationApply)).To(BeTrue(), "applied under credo's field manager")

	// Somebody strips the label: the same bundle is applied again to restore it.
	f.update(func(s *corev1.Secret) { delete(s.Labels, testLabel) })

	res = f.mustWrite(next)

	g.Expect(res.Changed).To(BeFalse(), "the content did not change")
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "PATCH": 1}))
	g.Expect(f.secret().Labels).To(HaveKeyWithValue(testLabel, "true"))
}

func TestWriteLeavesAForeignSecretUntouched(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	foreign := f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(t, "theirs")})

	_, err := f.write(caCert(t, "pg-ca"))

	g.Expect(err).To(MatchError(ErrCollision))
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1}), "read, never written")
	s := f.secret()
	g.Expect(s.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(s.Data).To(Equal(foreign.Data))
}

func TestWriteCollidesWithAForeignSecretCreatedSinceTheRead(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	f.readStale(nil)
	foreign := f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(t, "theirs")})

	_, err := f.write(caCert(t, "pg-ca"))

	g.Expect(err).To(MatchError(ErrCollision), "create, not apply: AlreadyExists")
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"POST": 1}))
	s := f.secret()
	g.Expect(s.ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(s.Data).To(Equal(foreign.Data))
	g.Expect(hasEntry(s, testFieldOwner, metav1.ManagedFieldsOperationApply)).To(BeFalse())
}

func TestWriteReplacesAnOverfullProjection(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	cert := caCert(t, "pg-ca")
	f.mustWrite(cert)
	f.update(func(s *corev1.Secret) { s.Data["tls.key"] = []byte("smuggled") })

	res := f.mustWrite(cert)

	g.Expect(res.Changed).To(BeFalse(), "ca.crt did not change")
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "PUT": 1}), "one read, one update")
	g.Expect(f.secret().Data).To(Equal(map[string][]byte{trustv1.ProjectionKey: res.Bundle.PEM}), "ca.crt alone again")
}

// A projection that moves to another owner (a declared platform anchor in
// place of a release's) keeps no reference to the former one: garbage
// collection would wait for both.
func TestWriteDropsTheFormerOwner(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	cert := caCert(t, "pg-ca")
	f.mustWrite(cert)
	ta := &trustv1.TrustAnchor{ObjectMeta: metav1.ObjectMeta{Name: "pg", UID: types.UID(utilrand.String(12))}, Spec: trustv1.TrustAnchorSpec{Release: "pg"}}
	f.reqs.take()

	res, err := f.w.Write(f.ctx, f.ns, AnchorOwner(ta), cert)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeFalse(), "ca.crt did not change")
	g.Expect(f.reqs.take()).To(Equal(map[string]int{"GET": 1, "PUT": 1}), "one read, one update")
	g.Expect(f.secret().OwnerReferences).To(Equal([]metav1.OwnerReference{AnchorOwner(ta).Ref}))
}

// TestWriteConflictsOnAStaleResourceVersion: what the writer read is the
// precondition of what it writes, on both write paths of an existing
// projection.
func TestWriteConflictsOnAStaleResourceVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// beforeFunc prepares the projection, returns what the writer reads,
		// then changes the Secret behind the writer's back.
		beforeFunc func(f *fixture) (read *corev1.Secret)
	}{
		{"an apply over a projection changed since the read conflicts", func(f *fixture) *corev1.Secret {
			read := f.secret()
			f.update(func(s *corev1.Secret) { s.Annotations = map[string]string{"touched": "yes"} })
			return read
		}},
		{"an apply over a projection replaced by a foreign Secret since the read conflicts", func(f *fixture) *corev1.Secret {
			read := f.secret()
			if err := f.admin.Delete(f.ctx, read); err != nil {
				f.t.Fatal(err)
			}
			f.createForeign(map[string][]byte{trustv1.ProjectionKey: caCert(f.t, "theirs")})
			return read
		}},
		{"a replace of an over-full projection changed since the read conflicts", func(f *fixture) *corev1.Secret {
			read := f.update(func(s *corev1.Secret) { s.Data["tls.key"] = []byte("smuggled") })
			f.update(func(s *corev1.Secret) { s.Data["tls.key"] = []byte("smuggled again") })
			return read
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			f := newFixture(t)
			f.mustWrite(caCert(t, "pg-ca"))
			f.readStale(tt.beforeFunc(f))
			before := f.secret()

			_, err := f.write(caCert(t, "pg-ca-2"))

			g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a conflict, got %v", err)
			after := f.secret()
			g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing written")
			g.Expect(after.Data).To(Equal(before.Data))
		})
	}
}

func TestWriteRefusesAPrivateKeyAndKeepsTheProjection(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t)
	cert, key := testpki.CA(t, "pg-ca")
	f.mustWrite(cert)
	before := f.secret()

	_, err := f.write(append(append([]byte{}, cert...), key...))

	g.Expect(pem.IsPrivateKey(err)).To(BeTrue(), "want the guard's refusal, got %v", err)
	g.Expect(f.reqs.take()).To(BeEmpty(), "a refused value sends no request")
	after := f.secret()
	g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
	g.Expect(after.Data).To(Equal(before.Data))
}
