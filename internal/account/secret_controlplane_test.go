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

package account

import (
	"context"
	"errors"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// controllerWrites runs the writes of the credential-controller on the
// real API server, for a tenant and for a platform account.
func controllerWrites(t *testing.T, c client.Client) {
	t.Run("create, metadata and delete of a tenant account's Secret", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		w, acct := namespaced(t, c, credv1.OwnerTenant)
		acct.Spec.SecretLabels = map[string]string{"team": "a"}
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "pg", UID: types.UID("hr-1")}}
		f, err := verifier.Lookup(verifier.SHA256Hex)
		g.Expect(err).NotTo(HaveOccurred())

		s, err := w.Create(ctx, acct, hr, f, "credo")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Annotations).To(HaveKeyWithValue(testKeys.Origin, string(credv1.OriginNotIssued)))
		g.Expect(s.Labels).To(HaveKeyWithValue("team", "a"))
		_, err = w.Create(ctx, acct, hr, f, "credo")
		g.Expect(errors.Is(err, ErrExists)).To(BeTrue(), "got %v", err)

		cur, err := w.Read(ctx, acct)
		g.Expect(err).NotTo(HaveOccurred())
		same, err := w.SetMetadata(ctx, acct, hr, cur)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(same.ResourceVersion).To(Equal(cur.ResourceVersion), "nothing is written when all is current")

		acct.Spec.SecretLabels["tier"] = "db"
		next, err := w.SetMetadata(ctx, acct, hr, cur)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(next.Labels).To(And(HaveKeyWithValue("tier", "db"), HaveKeyWithValue("team", "a")))
		g.Expect(next.Data).To(HaveKey(credv1.PasswordKey), "the password is never touched")
		_, err = w.SetMetadata(ctx, acct, hr, cur)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "on the version read only: got %v", err)

		moved := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "pg", UID: types.UID("hr-2")}}
		next, err = w.SetMetadata(ctx, acct, moved, next)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(next.OwnerReferences).To(HaveLen(1))
		g.Expect(next.OwnerReferences[0].UID).To(Equal(moved.UID), "the old release's reference is replaced")

		_, err = w.DeleteRecord(ctx, cur)
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "a record is deleted on the version read only: got %v", err)
		g.Expect(w.Read(ctx, acct)).NotTo(BeNil(), "a Secret written since is left")
		deleted, err := w.DeleteRecord(ctx, next)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deleted).To(BeTrue())
		g.Expect(w.Read(ctx, acct)).To(BeNil())
	})

	t.Run("a platform account reclaims and replaces the Secret of its name", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		w, acct := namespaced(t, c, credv1.OwnerPlatform)
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "pg", UID: types.UID("hr-1")}}
		f, err := verifier.Lookup(verifier.SHA256Hex)
		g.Expect(err).NotTo(HaveOccurred())
		planted := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: acct.SecretName(), Namespace: acct.Namespace},
			Type:       corev1.SecretTypeBasicAuth,
			Data:       map[string][]byte{credv1.PasswordKey: []byte("planted"), "extra": []byte("x")},
		}
		g.Expect(c.Create(ctx, planted, client.FieldOwner("mallory"))).To(Succeed())
		cur, err := w.Read(ctx, acct)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(errors.Is(w.Keys.Guard(cur, acct, true), ErrForeign)).To(BeTrue())

		k, err := w.KeptPassword(ctx, acct, "")
		g.Expect(err).NotTo(HaveOccurred())
		stored, err := StoredValue(f, acct.Spec.Username, k.Password)
		g.Expect(err).NotTo(HaveOccurred())
		tenant := acct.DeepCopy()
		tenant.Spec.Owner = credv1.OwnerTenant
		_, err = w.Reclaim(ctx, tenant, hr, cur, stored, Record{Origin: credv1.OriginGenerated, By: "credo"})
		g.Expect(err).To(HaveOccurred(), "a tenant account never reclaims")
		got, err := w.Reclaim(ctx, acct, hr, cur, stored, Record{Origin: credv1.OriginGenerated, By: "credo"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Data).To(HaveLen(2), "the planted keys are gone")
		g.Expect(w.Keys.Guard(got, acct, false)).To(Succeed())
		g.Expect(verifier.Matches(f, acct.Spec.Username, k.Password, string(got.Data[credv1.PasswordKey]))).To(BeTrue())

		frozen := got.DeepCopy()
		frozen.Immutable = ptr.To(true)
		g.Expect(c.Update(ctx, frozen, client.FieldOwner("mallory"))).To(Succeed())
		g.Expect(Frozen(frozen)).To(BeTrue())
		replaced, err := w.Replace(ctx, acct, hr, frozen, f, "credo")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(replaced.UID).NotTo(Equal(frozen.UID))
		g.Expect(Frozen(replaced)).To(BeFalse())
		g.Expect(verifier.Matches(f, acct.Spec.Username, k.Password, string(replaced.Data[credv1.PasswordKey]))).To(BeTrue(),
			"created again from the kept password")

		g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-credos", Namespace: acct.Namespace,
			Labels: map[string]string{testKeys.Account: "x"}}}, client.FieldOwner("mallory"))).To(Succeed())
		var foreign corev1.Secret
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: "not-credos"}, &foreign)).To(Succeed())
		deleted, err := w.DeleteRecord(ctx, &foreign)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deleted).To(BeFalse(), "a Secret credo did not write is never a record")

		kept, err := w.ReadKept(ctx, acct)
		g.Expect(err).NotTo(HaveOccurred())
		deleted, err = w.DeleteRecord(ctx, kept)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deleted).To(BeTrue())
		g.Expect(w.ReadKept(ctx, acct)).To(BeNil())
	})
}
