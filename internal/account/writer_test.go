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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

var testKeys = NewKeys("credentials.cozystack.io")

func testAccount(owner credv1.AccountOwner) *credv1.CredentialAccount {
	return &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant", UID: types.UID("uid-db")},
		Spec: credv1.CredentialAccountSpec{Release: "pg", Username: "app", Owner: owner,
			Format: credv1.Format{Name: verifier.SHA256Hex}},
	}
}

// entry is a managed fields entry of manager over fields (FieldsV1 JSON).
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(fields)}
}

// accountSecret is an account Secret of acct as credo wrote it: created by
// credo, then applied by credo (password, origin, UID), with a label
// another tool added.
func accountSecret(acct *credv1.CredentialAccount) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: acct.SecretName(), Namespace: acct.Namespace, ResourceVersion: "42",
			Labels: map[string]string{testKeys.Account: acct.Name, "team": "a"},
			Annotations: map[string]string{testKeys.AccountUID: string(acct.UID), testKeys.Origin: "Minted",
				testKeys.History: History(nil).Append(credv1.OriginMinted, "jane", time.Unix(100, 0)).String()},
			ManagedFields: []metav1.ManagedFieldsEntry{
				entry(FieldOwner, metav1.ManagedFieldsOperationUpdate, `{"f:data":{".":{},"f:username":{}},"f:type":{}}`),
				entry(FieldOwner, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:password":{}},"f:metadata":{"f:annotations":{`+
					`"f:credentials.cozystack.io/account-uid":{},"f:credentials.cozystack.io/origin":{}}}}`),
				entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
			},
		},
		Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{credv1.UsernameKey: []byte("app"), credv1.PasswordKey: []byte("old verifier")},
	}
}

func TestGuardWritesOnlyCredosSecretOfTheAccount(t *testing.T) {
	acct := testAccount(credv1.OwnerTenant)
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Secret)
		legacy bool
		want   error
	}{
		{name: "credo's Secret of the account passes", mutate: func(*corev1.Secret) {}},
		{name: "a Secret without credo's field manager is foreign", want: ErrForeign,
			mutate: func(s *corev1.Secret) { s.ManagedFields = s.ManagedFields[2:] }},
		{name: "a Secret carrying another account's UID is claimed", want: ErrClaimed,
			mutate: func(s *corev1.Secret) { s.Annotations[testKeys.AccountUID] = "uid-other" }},
		{name: "a Secret without a UID is claimed when not adopting", want: ErrClaimed,
			mutate: func(s *corev1.Secret) { delete(s.Annotations, testKeys.AccountUID) }},
		{name: "a Secret without a UID and with the account's label is adopted", legacy: true,
			mutate: func(s *corev1.Secret) { delete(s.Annotations, testKeys.AccountUID) }},
		{name: "a Secret without a UID and with another account's label is not adopted", legacy: true, want: ErrClaimed,
			mutate: func(s *corev1.Secret) {
				delete(s.Annotations, testKeys.AccountUID)
				s.Labels[testKeys.Account] = "other"
			}},
		{name: "adoption never passes another account's UID", legacy: true, want: ErrClaimed,
			mutate: func(s *corev1.Secret) { s.Annotations[testKeys.AccountUID] = "uid-other" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := accountSecret(acct)
			tc.mutate(s)
			err := testKeys.Guard(s, acct, tc.legacy)
			if tc.want == nil {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(errors.Is(err, tc.want)).To(BeTrue(), "got %v", err)
		})
	}
}

func TestOwnPartCarriesWhatCredoAppliedAndThePrecondition(t *testing.T) {
	g := NewWithT(t)
	cur := accountSecret(testAccount(credv1.OwnerTenant))
	part, err := ownPart(cur)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(part.ResourceVersion).To(Equal("42"), "the apply is conditional on the version read")
	g.Expect(part.Name).To(Equal(cur.Name))
	g.Expect(part.Data).To(HaveKey(credv1.PasswordKey))
	g.Expect(part.Data).NotTo(HaveKey(credv1.UsernameKey), "fields credo created but never applied stay with the create")
	g.Expect(part.Annotations).To(HaveKey(testKeys.Origin))
	g.Expect(part.Annotations).NotTo(HaveKey(testKeys.History))
	g.Expect(part.Labels).NotTo(HaveKey("team"), "another manager's label is never applied by credo")
}

func TestRecordStoresTheValueAndAppendsTheOperation(t *testing.T) {
	at := time.Unix(200, 0)
	w := &Writer{Keys: testKeys, Now: func() time.Time { return at }}
	for _, owner := range []credv1.AccountOwner{credv1.OwnerTenant, credv1.OwnerPlatform} {
		t.Run(string(owner), func(t *testing.T) {
			g := NewWithT(t)
			acct := testAccount(owner)
			cur := accountSecret(acct)
			cur.Annotations[testKeys.Rotate] = "before"
			next, err := ownPart(cur)
			g.Expect(err).NotTo(HaveOccurred())
			next.Annotations[testKeys.Rotate] = "before"
			w.record(next, cur, acct, "new verifier", Record{Origin: credv1.OriginRevoked, By: "joe", Rotate: ""})

			g.Expect(string(next.Data[credv1.PasswordKey])).To(Equal("new verifier"))
			g.Expect(next.Annotations).To(HaveKeyWithValue(testKeys.AccountUID, string(acct.UID)))
			g.Expect(next.Annotations).To(HaveKeyWithValue(testKeys.Origin, string(credv1.OriginRevoked)))
			h := ParseHistory(next.Annotations[testKeys.History])
			g.Expect(h).To(HaveLen(2), "the history read is kept")
			g.Expect(h[1].By).To(Equal("joe"))
			g.Expect(h[1].At.Time).To(BeTemporally("==", at))
			if owner == credv1.OwnerPlatform {
				g.Expect(next.Annotations).To(HaveKeyWithValue(testKeys.Rotate, ""), "a platform write records the rotation it answers, none here")
				delete(cur.Annotations, testKeys.Rotate)
				delete(next.Annotations, testKeys.Rotate)
				w.record(next, cur, acct, "new verifier", Record{Origin: credv1.OriginRevoked, By: "joe", Rotate: ""})
				g.Expect(next.Annotations).NotTo(HaveKey(testKeys.Rotate), "none recorded stays absent")
				w.record(next, cur, acct, "new verifier", Record{Origin: credv1.OriginGenerated, By: "joe", Rotate: "r1"})
				g.Expect(next.Annotations).To(HaveKeyWithValue(testKeys.Rotate, "r1"))
			} else {
				g.Expect(next.Annotations).To(HaveKey(testKeys.Rotate), "a tenant write leaves it alone")
			}
		})
	}
}

func TestKeptGuard(t *testing.T) {
	g := NewWithT(t)
	acct := testAccount(credv1.OwnerPlatform)
	kept := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: KeptSecretName(acct), Namespace: "credo-system",
		Labels:        map[string]string{testKeys.Account: KeptLabel(acct)},
		ManagedFields: []metav1.ManagedFieldsEntry{entry(FieldOwner, metav1.ManagedFieldsOperationUpdate, `{}`)}}}
	g.Expect(testKeys.keptGuard(kept, acct)).To(Succeed(), "written before UIDs: the label names the account")
	testKeys.Stamp(kept, acct.UID)
	g.Expect(testKeys.keptGuard(kept, acct)).To(Succeed())
	testKeys.Stamp(kept, "uid-other")
	g.Expect(errors.Is(testKeys.keptGuard(kept, acct), ErrKeptClaimed)).To(BeTrue())
	testKeys.Stamp(kept, acct.UID)
	kept.ManagedFields = nil
	g.Expect(errors.Is(testKeys.keptGuard(kept, acct), ErrKeptClaimed)).To(BeTrue(), "credo never wrote it")
}

// refusingClient fails the test on any request.
func refusingClient(t *testing.T) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	fail := func(string) error { t.Errorf("a request was sent"); return errors.New("no request expected") }
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return fail("get")
		},
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return fail("create")
		},
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
			return fail("update")
		},
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return fail("patch")
		},
	})
}

func TestNothingIsSentForASecretTheGuardRefuses(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	for _, owner := range []credv1.AccountOwner{credv1.OwnerTenant, credv1.OwnerPlatform} {
		acct := testAccount(owner)
		w := &Writer{Client: refusingClient(t), Keys: testKeys, PlatformNamespace: "credo-system"}
		foreign := accountSecret(acct)
		foreign.ManagedFields = foreign.ManagedFields[2:]
		f, err := verifier.Lookup(verifier.SHA256Hex)
		g.Expect(err).NotTo(HaveOccurred())

		password, _, err := w.NewPassword(ctx, acct, foreign, f, Record{Origin: credv1.OriginMinted, By: "jane"})
		g.Expect(errors.Is(err, ErrForeign)).To(BeTrue(), "got %v", err)
		g.Expect(password).To(BeEmpty())
		_, err = w.Store(ctx, acct, foreign, "verifier", Record{Origin: credv1.OriginMinted, By: "jane"})
		g.Expect(errors.Is(err, ErrForeign)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).NotTo(ContainSubstring("verifier\""), "no stored value in the error")
	}
}

func TestApplyNeedsAPrecondition(t *testing.T) {
	g := NewWithT(t)
	w := &Writer{Client: refusingClient(t), Keys: testKeys}
	s := accountSecret(testAccount(credv1.OwnerTenant))
	s.ResourceVersion = ""
	_, err := w.apply(context.Background(), s)
	g.Expect(err).To(MatchError(ContainSubstring("no resourceVersion")))
}

func TestFormatErrorHoldsNoPassword(t *testing.T) {
	g := NewWithT(t)
	f, err := verifier.Lookup(verifier.SCRAMSHA256)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = storedValue(f, "app", "secret\x00password")
	var fe *FormatError
	g.Expect(errors.As(err, &fe)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(HavePrefix("format " + verifier.SCRAMSHA256))
	g.Expect(err.Error()).NotTo(ContainSubstring("secret"))
}
