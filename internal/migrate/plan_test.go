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

package migrate

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
)

var keys = account.NewKeys("credentials.cozystack.io")

// managedByCredo is the managed fields entry that makes the guard pass.
var managedByCredo = []metav1.ManagedFieldsEntry{{Manager: account.FieldOwner, Operation: metav1.ManagedFieldsOperationApply,
	FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:password":{}}}`)}}

func acct(name, username string, owner credv1.AccountOwner) *credv1.CredentialAccount {
	return &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "t", UID: types.UID("uid-" + name)},
		Spec: credv1.CredentialAccountSpec{Release: "db", Username: username, Owner: owner,
			Format: credv1.Format{Name: verifier.SHA256Hex, Kind: credv1.FormatBuiltIn}},
	}
}

// accountSecret is a's Secret as credo writes it, with origin and, when
// password is set, the verifier of password.
func accountSecret(a *credv1.CredentialAccount, origin credv1.Origin, password string, extra ...string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: a.SecretName(), Namespace: a.Namespace, ManagedFields: managedByCredo,
			Annotations: map[string]string{keys.AccountUID: string(a.UID), keys.Origin: string(origin)}},
		Type: corev1.SecretTypeBasicAuth,
		Data: map[string][]byte{credv1.PasswordKey: []byte("nothing")},
	}
	if password != "" {
		f, _ := verifier.Lookup(verifier.SHA256Hex)
		v, _ := f.Verifier(a.Spec.Username, password)
		s.Data[credv1.PasswordKey] = []byte(v)
	}
	for _, k := range extra {
		s.Annotations[k] = "2026-01-01T00:00:00Z"
	}
	return s
}

func readyRelease() *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "t", Generation: 2}}
	hr.Status.ObservedGeneration = 2
	hr.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Succeeded"}}
	return hr
}

func TestPlan(t *testing.T) {
	alice, bob := acct("alice", "alice", ""), acct("bob", "bob", credv1.OwnerTenant)
	root, backup := acct("root", "root", credv1.OwnerPlatform), acct("backup", "backup", credv1.OwnerPlatform)
	creds := &corev1.Secret{Data: map[string][]byte{"alice": []byte("a-pass"), "bob": []byte("b-pass"), "root": []byte("r-pass")}}
	base := func() state {
		return state{namespace: "t", name: "db", hr: readyRelease(), credentialsName: "db-credentials", credentials: creds.DeepCopy(),
			accounts: []*credv1.CredentialAccount{alice, backup, bob, root},
			secrets: map[string]*corev1.Secret{
				"alice": accountSecret(alice, credv1.OriginNotIssued, ""), "bob": accountSecret(bob, credv1.OriginNotIssued, ""),
				"root": accountSecret(root, credv1.OriginGenerated, ""), "backup": accountSecret(backup, credv1.OriginGenerated, ""),
			}}
	}
	tests := []struct {
		name       string
		beforeFunc func(st *state)
		skip       string
		want       map[string]string
	}{
		{name: "tenant accounts are carried over and every platform account is rotated once, exposed or not now", want: map[string]string{
			"alice": "migrate/CarryOver", "bob": "migrate/CarryOver", "root": "rotate/Exposed", "backup": "rotate/MaybeExposed"}},
		{name: "a re-run finds migrated tenant accounts up to date and the platform account rotated",
			beforeFunc: func(st *state) {
				st.secrets["alice"] = accountSecret(alice, credv1.OriginMigrated, "a-pass", keys.PreviouslyExposed())
				st.secrets["bob"] = accountSecret(bob, credv1.OriginMigrated, "b-pass", keys.PreviouslyExposed())
				st.secrets["root"] = accountSecret(root, credv1.OriginGenerated, "", keys.MigratedRotation())
				st.secrets["backup"] = accountSecret(backup, credv1.OriginGenerated, "", keys.MigratedRotation())
			},
			want: map[string]string{"alice": "skip/UpToDate", "bob": "skip/UpToDate", "root": "skip/AlreadyRotated", "backup": "skip/AlreadyRotated"}},
		{name: "a minted or revoked account is never given the chart's older password",
			beforeFunc: func(st *state) {
				st.secrets["alice"] = accountSecret(alice, credv1.OriginMinted, "")
				st.secrets["bob"] = accountSecret(bob, credv1.OriginRevoked, "")
				delete(st.credentials.Data, "bob")
			},
			want: map[string]string{"alice": "skip/NewerPassword", "bob": "skip/NewerPassword", "root": "rotate/Exposed", "backup": "rotate/MaybeExposed"}},
		{name: "a chart password changed since the last run is carried over again",
			beforeFunc: func(st *state) { st.secrets["alice"] = accountSecret(alice, credv1.OriginMigrated, "older") },
			want:       map[string]string{"alice": "migrate/ChangedSinceMigration", "bob": "migrate/CarryOver", "root": "rotate/Exposed", "backup": "rotate/MaybeExposed"}},
		{name: "a missing HelmRelease skips the release", beforeFunc: func(st *state) { st.hr = nil }, skip: HelmReleaseNotFoundReason},
		{name: "a suspended release is skipped", beforeFunc: func(st *state) { st.hr.Spec.Suspend = true }, skip: SuspendedReason},
		{name: "a release not Ready is skipped", beforeFunc: func(st *state) { st.hr.Status.Conditions[0].Status = metav1.ConditionFalse }, skip: NotReadyReason},
		{name: "a release Ready on an older generation is skipped", beforeFunc: func(st *state) { st.hr.Generation = 3 }, skip: NotReadyReason},
		{name: "a release without <release>-credentials is skipped", beforeFunc: func(st *state) { st.credentials = nil }, skip: CredentialsMissingReason},
		{name: "a tenant account's missing key skips the release", beforeFunc: func(st *state) { delete(st.credentials.Data, "bob") }, skip: KeyMissingReason},
		{name: "an account Secret not created yet skips the release", beforeFunc: func(st *state) { st.secrets["bob"] = nil }, skip: AccountSecretMissingReason},
		{name: "a foreign account Secret skips the release", beforeFunc: func(st *state) { st.secrets["bob"].ManagedFields = nil }, skip: AccountSecretForeignReason},
		{name: "an account Secret of another account skips the release",
			beforeFunc: func(st *state) { st.secrets["bob"].Annotations[keys.AccountUID] = "uid-other" }, skip: AccountSecretForeignReason},
		{name: "an account Secret of an earlier release of the name skips the release",
			beforeFunc: func(st *state) { st.secrets["bob"].Labels = map[string]string{keys.ReleaseUID: "uid-earlier"} }, skip: AccountSecretForeignReason},
		{name: "an unknown format skips the release",
			beforeFunc: func(st *state) {
				b := bob.DeepCopy()
				b.Spec.Format.Name = "bcrypt"
				st.accounts[2] = b
			}, skip: FormatRefusedReason},
		{name: "a platform plaintext account whose consumer needs it (MariaDB's root) is rotated once",
			beforeFunc: func(st *state) { st.accounts[3] = plaintextRoot(root, false) },
			want:       map[string]string{"alice": "migrate/CarryOver", "bob": "migrate/CarryOver", "root": "rotate/Exposed", "backup": "rotate/MaybeExposed"}},
		{name: "a platform plaintext account the controller found exposed skips the release",
			beforeFunc: func(st *state) { st.accounts[3] = plaintextRoot(root, true) }, skip: PlaintextExposedReason},
		{name: "a platform account in the plaintext format without its delivery skips the release",
			beforeFunc: func(st *state) {
				r := root.DeepCopy()
				r.Spec.Format.Name = verifier.Plain
				st.accounts[3] = r
			}, skip: FormatRefusedReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			st := base()
			if tt.beforeFunc != nil {
				tt.beforeFunc(&st)
			}
			r := plan(keys, PhaseAll, st)
			if tt.skip != "" {
				g.Expect(r.Skip).NotTo(BeNil())
				g.Expect(r.Skip.Reason).To(Equal(tt.skip))
				g.Expect(r.Steps).To(BeEmpty(), "a skipped release is written nothing")
				for _, v := range []string{"a-pass", "b-pass", "r-pass"} {
					g.Expect(strings.Contains(r.Skip.Message, v)).To(BeFalse(), "the message holds no password")
				}
				return
			}
			g.Expect(r.Skip).To(BeNil())
			g.Expect(actions(r)).To(Equal(tt.want))
		})
	}
}

// actions are r's steps as action/reason, by account.
func actions(r Release) map[string]string {
	out := map[string]string{}
	for _, s := range r.Steps {
		out[s.Account] = string(s.Action) + "/" + s.Reason
	}
	return out
}

// plaintextRoot is root of format plaintext, delivered to its consumer;
// exposed, the controller found its namespace exposed.
func plaintextRoot(root *credv1.CredentialAccount, exposed bool) *credv1.CredentialAccount {
	r := root.DeepCopy()
	r.Spec.Format.Name = verifier.Plain
	r.Spec.Plaintext = &credv1.PlaintextDelivery{}
	if exposed {
		r.Status.Conditions = []metav1.Condition{{Type: credv1.SecretFailedCondition, Status: metav1.ConditionTrue,
			Reason: credv1.PlaintextExposedReason, Message: "user:ada may get secrets"}}
	}
	return r
}

func TestReportScope(t *testing.T) {
	g := NewWithT(t)
	all := Options{}
	g.Expect(all.inScope("t.db")).To(BeTrue())
	ns := Options{Namespace: "t"}
	g.Expect(ns.inScope("t.db")).To(BeTrue())
	g.Expect(ns.inScope("u.db")).To(BeFalse())
	one := Options{Namespace: "t", Release: "db.v2"}
	g.Expect(one.inScope("t.db.v2")).To(BeTrue(), "a release name may hold dots; a namespace may not")
	g.Expect(one.inScope("t.db")).To(BeFalse())
}

// TestPlanReferencedSecret plans MariaDB's root of an existing release,
// which the MariaDB keeps reading from <release>-credentials: stamped keep
// before the chart switch, adopted and rotated once no Helm release
// renders it, and never while one does.
func TestPlanReferencedSecret(t *testing.T) {
	root := plaintextRoot(acct("root", "root", credv1.OwnerPlatform), false)
	root.Spec.Plaintext.SecretRef = &credv1.SecretKeyRef{Name: "db-credentials", Key: "root"}
	// legacy is the chart's db-credentials, with Helm's metadata and
	// annotations.
	legacy := func(annotations map[string]string) *corev1.Secret {
		a := map[string]string{"meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "t"}
		for k, v := range annotations {
			a[k] = v
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Namespace: "t", Annotations: a},
			Data: map[string][]byte{"root": []byte("r-pass")}}
	}
	ofRelease := func(release string) *corev1.Secret {
		s := legacy(nil)
		s.Annotations["meta.helm.sh/release-name"] = release
		return s
	}
	adoptedBefore := func(uid string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Namespace: "t",
			Annotations:     map[string]string{keys.PlaintextOf(): uid},
			OwnerReferences: []metav1.OwnerReference{{Kind: "HelmRelease", Name: "db", UID: "hr-uid"}}}}
		return s
	}
	rotated := accountSecret(root, credv1.OriginGenerated, "", keys.MigratedRotation())
	tests := []struct {
		name       string
		phase      Phase
		referenced *corev1.Secret
		rendered   bool
		unreadable string
		secret     *corev1.Secret
		want       string
		skip       string
	}{
		{name: "before the switch, the Secret is stamped keep", phase: PhasePrepare,
			referenced: legacy(nil), rendered: true, want: "keep/BeforeSwitch"},
		{name: "a Secret stamped keep is left as it is", phase: PhasePrepare,
			referenced: legacy(map[string]string{account.HelmResourcePolicy: "keep"}), rendered: true, want: "skip/AlreadyKept"},
		{name: "after the switch, a Secret the release still renders skips the release", phase: PhaseAll,
			referenced: legacy(map[string]string{account.HelmResourcePolicy: "keep"}), rendered: true, skip: StillRenderedReason},
		{name: "a Secret no release renders is adopted, and the account rotated", phase: PhaseAll,
			referenced: legacy(map[string]string{account.HelmResourcePolicy: "keep"}), want: "adopt/NoLongerRendered"},
		{name: "an adopted Secret of a rotated account is done", phase: PhaseAll,
			referenced: legacy(map[string]string{keys.PlaintextOf(): string(root.UID)}), secret: rotated, want: "skip/AlreadyRotated"},
		{name: "an adopted Secret of an account not rotated yet is rotated", phase: PhaseAll,
			referenced: legacy(map[string]string{keys.PlaintextOf(): string(root.UID)}), want: "rotate/Exposed"},
		{name: "a Secret adopted for another account skips the release", phase: PhaseAll,
			referenced: legacy(map[string]string{keys.PlaintextOf(): "uid-other"}), skip: AccountSecretForeignReason},
		{name: "a Secret adopted for an account of the release since deleted is adopted again", phase: PhaseAll,
			referenced: adoptedBefore("uid-gone"), want: "adopt/NoLongerRendered"},
		{name: "a missing Secret skips the release", phase: PhaseAll, skip: ReferencedSecretMissingReason},
		{name: "another release's Secret is not kept", phase: PhasePrepare, referenced: ofRelease("other"), skip: ReferencedSecretForeignReason},
		{name: "another release's Secret is not adopted", phase: PhaseAll, referenced: ofRelease("other"), skip: ReferencedSecretForeignReason},
		{name: "a Secret made by hand is not adopted", phase: PhaseAll,
			referenced: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Namespace: "t"}}, skip: ReferencedSecretForeignReason},
		{name: "a Helm record that cannot tell skips the release", phase: PhaseAll,
			referenced: legacy(map[string]string{account.HelmResourcePolicy: "keep"}), unreadable: "no record", skip: HelmRecordUnreadableReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := tt.secret
			if s == nil {
				s = accountSecret(root, credv1.OriginGenerated, "")
			}
			hr := readyRelease()
			hr.UID = "hr-uid"
			st := state{namespace: "t", name: "db", hr: hr, namespaceUID: "ns-uid",
				unreadable: map[string]string{"root": tt.unreadable}, live: map[string]bool{string(root.UID): true, "uid-other": true},
				credentialsName: "db-credentials", credentials: legacy(nil),
				accounts: []*credv1.CredentialAccount{root}, secrets: map[string]*corev1.Secret{"root": s},
				referenced: map[string]*corev1.Secret{"root": tt.referenced}, rendered: map[string]bool{"root": tt.rendered}}
			r := plan(keys, tt.phase, st)
			if tt.skip != "" {
				g.Expect(r.Skip).NotTo(BeNil())
				g.Expect(r.Skip.Reason).To(Equal(tt.skip))
				g.Expect(r.Skip.Message).NotTo(ContainSubstring("r-pass"))
				return
			}
			g.Expect(r.Skip).To(BeNil())
			g.Expect(actions(r)).To(Equal(map[string]string{"root": tt.want}))
		})
	}
}
