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
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// startControlPlane starts a control plane for t, stopped when t ends, and
// returns its client.
func startControlPlane(t *testing.T) client.Client {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	return testenv.ControlPlane(t, controlplane.Options{NoControllerManager: true}).Client
}

// namespaced returns acct in a new namespace, and a writer keeping
// platform passwords in that namespace.
func namespaced(t *testing.T, c client.Client, owner credv1.AccountOwner) (*Writer, *credv1.CredentialAccount) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "account-"}}
	NewWithT(t).Expect(c.Create(context.Background(), ns)).To(Succeed())
	acct := testAccount(owner)
	acct.Namespace = ns.Name
	return &Writer{Client: c, Keys: testKeys, PlatformNamespace: ns.Name}, acct
}

// created creates acct's account Secret as the controller does, under
// credo's field manager, and returns it as read back.
func created(t *testing.T, g Gomega, w *Writer, acct *credv1.CredentialAccount) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: acct.SecretName(), Namespace: acct.Namespace,
			Labels: map[string]string{w.Keys.Account: acct.Name},
			Annotations: map[string]string{w.Keys.AccountUID: string(acct.UID), w.Keys.Origin: string(credv1.OriginNotIssued),
				w.Keys.History: History(nil).Append(credv1.OriginNotIssued, "credo", time.Now()).String()}},
		Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{credv1.UsernameKey: []byte(acct.Spec.Username), credv1.PasswordKey: []byte("not issued")},
	}
	g.Expect(w.create(context.Background(), s)).To(Succeed())
	got, err := w.Read(context.Background(), acct)
	g.Expect(err).NotTo(HaveOccurred())
	return got
}

// newPassword writes a new password over cur and returns it and the
// Secret read back, checked to hold its verifier (values not printed).
func newPassword(g Gomega, w *Writer, acct *credv1.CredentialAccount, cur *corev1.Secret, rec Record) (string, *corev1.Secret) {
	ctx := context.Background()
	f, err := verifier.Lookup(acct.Spec.Format.Name)
	g.Expect(err).NotTo(HaveOccurred())
	password, written, err := w.NewPassword(ctx, acct, cur, f, rec)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := w.Read(ctx, acct)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.ResourceVersion).To(And(Equal(written.ResourceVersion), Not(Equal(cur.ResourceVersion))))
	g.Expect(verifier.Matches(f, acct.Spec.Username, password, string(got.Data[credv1.PasswordKey]))).To(BeTrue(),
		"the stored verifier is the verifier of the password")
	g.Expect(got.Annotations).To(HaveKeyWithValue(testKeys.Origin, string(rec.Origin)))
	g.Expect(testKeys.Guard(got, acct, false)).To(Succeed())
	return password, got
}

func TestWriterOnTheAPIServer(t *testing.T) {
	c := startControlPlane(t)
	t.Run("a tenant account's Secret is written on the version read, and nothing else of it is lost", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		w, acct := namespaced(t, c, credv1.OwnerTenant)
		cur := created(t, g, w, acct)
		again := cur.DeepCopy()
		again.ResourceVersion, again.UID, again.ManagedFields = "", "", nil
		g.Expect(errors.Is(w.create(ctx, again), ErrExists)).To(BeTrue(), "create, never apply, over an existing Secret")

		// Another tool labels the Secret: a later write keeps its label, and
		// credo's fields it did not change.
		labelled := cur.DeepCopy()
		labelled.Labels["team"] = "a"
		g.Expect(c.Update(ctx, labelled, client.FieldOwner("kubectl-label"))).To(Succeed())
		_, err := w.Store(ctx, acct, cur, "verifier", Record{Origin: credv1.OriginMinted, By: "jane"})
		g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "a version changed since the read is never written over: got %v", err)
		cur, err = w.Read(ctx, acct)
		g.Expect(err).NotTo(HaveOccurred())

		for i := range 2 {
			_, cur = newPassword(g, w, acct, cur, Record{Origin: credv1.OriginMinted, By: "jane"})
			g.Expect(string(cur.Data[credv1.UsernameKey])).To(Equal(acct.Spec.Username))
			g.Expect(cur.Labels).To(And(HaveKeyWithValue("team", "a"), HaveKeyWithValue(testKeys.Account, acct.Name)))
			g.Expect(cur.Type).To(Equal(corev1.SecretTypeBasicAuth))
			g.Expect(ParseHistory(cur.Annotations[testKeys.History])).To(HaveLen(2 + i))
		}

		other := acct.DeepCopy()
		other.UID = types.UID("uid-other")
		_, err = w.Store(ctx, other, cur, "verifier", Record{Origin: credv1.OriginMinted, By: "mallory"})
		g.Expect(errors.Is(err, ErrClaimed)).To(BeTrue(), "got %v", err)
	})

	t.Run("a platform account's password is kept first, with the rotation it answers", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		w, acct := namespaced(t, c, credv1.OwnerPlatform)
		cur := created(t, g, w, acct)
		for _, rotate := range []string{"r1", "r2", ""} {
			var password string
			password, cur = newPassword(g, w, acct, cur, Record{Origin: credv1.OriginGenerated, By: "credo", Rotate: rotate})
			kept, err := w.ReadKept(ctx, acct)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(kept).NotTo(BeNil())
			g.Expect(string(kept.Data[credv1.PasswordKey]) == password).To(BeTrue(), "the password is kept (values not printed)")
			g.Expect(kept.Annotations[testKeys.Rotate]).To(Equal(rotate))
			g.Expect(cur.Annotations[testKeys.Rotate]).To(Equal(rotate))
		}

		other := acct.DeepCopy()
		other.UID = types.UID("uid-other")
		g.Expect(errors.Is(w.Keep(ctx, other, "x", ""), ErrKeptClaimed)).To(BeTrue(), "another account's kept password is never written")
	})

	controllerWrites(t, c)
}
