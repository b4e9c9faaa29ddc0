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

package upgrade

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/ca/embedded"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

// tenant is what tenants have on the previous release: in one namespace,
// two releases whose CAs are published by label (db's rotated under load,
// cache's never), db's platform account and a tenant account of each
// (db-app minted under load, cache-app once before the upgrade), and an
// EnrollmentPolicy with a join token.
type tenant struct {
	ns       string
	token    string
	accounts []*credv1.CredentialAccount
}

// Agents renew in the last third of their certificates' lifetime: every
// 8 to 10 seconds with this TTL.
const certificateTTL = 15 * time.Second

func newTenant(t *testing.T, g Gomega) *tenant {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-upgrade"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	tn := &tenant{ns: ns.Name}
	for _, release := range []string{"db", "cache"} {
		g.Expect(env.Client.Create(ctx, testenv.HelmReleaseObject(ns.Name, release, "postgres", nil))).To(Succeed())
		_, err := tn.rotate(release)
		g.Expect(err).NotTo(HaveOccurred())
	}
	for _, a := range []struct {
		name, release, user string
		owner               credv1.AccountOwner
	}{
		{"db-postgres", "db", "postgres", credv1.OwnerPlatform},
		{"db-app", "db", "app", credv1.OwnerTenant},
		{"cache-app", "cache", "app", credv1.OwnerTenant},
	} {
		acct := &credv1.CredentialAccount{
			ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: ns.Name},
			Spec: credv1.CredentialAccountSpec{Release: a.release, Username: a.user, Owner: a.owner,
				Format: credv1.Format{Name: verifier.SCRAMSHA256}},
		}
		g.Expect(env.Client.Create(ctx, acct)).To(Succeed())
		tn.accounts = append(tn.accounts, acct)
	}
	g.Eventually(func(g Gomega) {
		for _, a := range tn.accounts {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: a.SecretName()}, &corev1.Secret{})).To(Succeed())
		}
		g.Expect(env.Client.Get(ctx, keptKey(tn.accounts[0]), &corev1.Secret{})).To(Succeed())
	}, time.Minute, 250*time.Millisecond).Should(Succeed(), "the previous release makes the accounts' Secrets and the kept password")
	for _, a := range []string{"db-app", "cache-app"} {
		g.Eventually(func() error { return tn.mint(a) }, time.Minute, time.Second).Should(Succeed(), "the previous release mints %s", a)
	}

	p := &enrollv1.EnrollmentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: ns.Name},
		Spec: enrollv1.EnrollmentPolicySpec{
			AllowedLabels:  []enrollv1.LabelRule{{Key: "role", Values: []string{"web"}}},
			CertificateTTL: &metav1.Duration{Duration: certificateTTL},
			RenewalGrace:   &metav1.Duration{Duration: time.Minute},
		},
	}
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	tr := &accessv1.JoinTokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name}, Spec: accessv1.JoinTokenRequestSpec{Policy: p.Name}}
	g.Eventually(func() error { return env.Client.Create(ctx, tr) }, time.Minute, time.Second).Should(Succeed(), "a join token from the previous release")
	tn.token = tr.Status.Token
	return tn
}

// keptKey is where the credential-controller keeps a platform account's
// password.
func keptKey(a *credv1.CredentialAccount) client.ObjectKey {
	return client.ObjectKey{Namespace: "credo-system", Name: account.KeptSecretName(a)}
}

// mint mints a password for the account through kube-apiserver; the
// password is dropped unread.
func (tn *tenant) mint(acct string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := &accessv1.Mint{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns}, Spec: accessv1.AccountRequestSpec{Account: acct}}
	return env.Client.Create(ctx, m)
}

// rotate gives release a new CA in its labelled source Secret <release>-ca
// (created the first time) and returns the certificate.
func (tn *tenant) rotate(release string) ([]byte, error) {
	ctx := context.Background()
	ca, err := testpki.NewCA(release + " CA")
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: release + "-ca",
		Labels: trustv1.NewContractKeys(embedded.DefaultLabelDomain).PublishLabels(release)}}
	s.Data = map[string][]byte{"ca.crt": ca.CertPEM()}
	err = env.Client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = env.Client.Update(ctx, s)
	}
	return ca.CertPEM(), err
}

// projected reads release's <release>.tenant-ca.
func (tn *tenant) projected(release string) ([]byte, error) {
	var s corev1.Secret
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: tn.ns, Name: trustv1.ProjectionName(release)}, &s)
	return s.Data[trustv1.ProjectionKey], err
}

// enrollmentCA is the enrollment CA as the install publishes it
// (credo-system/credo.tenant-ca), written to a file for agents, and as a
// pool.
func enrollmentCA(t *testing.T, g Gomega) (string, *x509.CertPool) {
	var s corev1.Secret
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: "credo-system", Name: trustv1.ProjectionName("credo")}, &s)
	}, time.Minute, time.Second).Should(Succeed(), "the enrollment CA is published")
	file := filepath.Join(t.TempDir(), "ca.crt")
	g.Expect(os.WriteFile(file, s.Data[trustv1.ProjectionKey], 0o600)).To(Succeed())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(s.Data[trustv1.ProjectionKey])).To(BeTrue())
	return file, pool
}

// snapshot records what the upgrade must keep: what tenants see and were
// not asked to change (cache's projection, the account Secrets not minted
// during the load, the kept platform password), the enrollment CA and its
// anchor, every Workload (no agent enrolls again) and, by UID, the CRDs
// and the TrustAnchors (upgraded or rewritten in place, never replaced).
func (tn *tenant) snapshot(g Gomega) (written, replaced []testenv.Kept) {
	ctx := context.Background()
	secret := func(ns, name string) testenv.Kept {
		return testenv.Record(g, env.Client, "Secret "+ns+"/"+name, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
	}
	written = []testenv.Kept{
		secret(tn.ns, trustv1.ProjectionName("cache")),
		secret(tn.ns, tn.accounts[0].SecretName()), // db-postgres, platform
		secret(tn.ns, tn.accounts[2].SecretName()), // cache-app, minted before only
		testenv.Record(g, env.Client, "the kept password of db-postgres", keptKey(tn.accounts[0]), &corev1.Secret{}),
		secret("credo-system", "credo-enrollment-ca"),
		secret("credo-system", trustv1.ProjectionName("credo")),
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	g.Expect(env.Client.List(ctx, &crds)).To(Succeed())
	for _, c := range crds.Items {
		if isCredo(c.Spec.Group) {
			replaced = append(replaced, testenv.Record(g, env.Client, "CRD "+c.Name, client.ObjectKey{Name: c.Name}, &apiextensionsv1.CustomResourceDefinition{}))
		}
	}
	g.Expect(replaced).To(HaveLen(7), "credo's seven CRDs")
	var anchors trustv1.TrustAnchorList
	g.Expect(env.Client.List(ctx, &anchors)).To(Succeed())
	for _, a := range anchors.Items {
		replaced = append(replaced, testenv.Record(g, env.Client, "TrustAnchor "+a.Namespace+"/"+a.Name, client.ObjectKeyFromObject(&a), &trustv1.TrustAnchor{}))
	}
	var ws enrollv1.WorkloadList
	g.Expect(env.Client.List(ctx, &ws, client.InNamespace(tn.ns))).To(Succeed())
	for _, w := range ws.Items {
		replaced = append(replaced, testenv.Record(g, env.Client, "Workload "+w.Name, client.ObjectKeyFromObject(&w), &enrollv1.Workload{}))
	}
	return written, replaced
}

func isCredo(group string) bool {
	switch group {
	case trustv1.GroupVersion.Group, credv1.GroupVersion.Group, enrollv1.GroupVersion.Group:
		return true
	}
	return false
}

// allReady expects every TrustAnchor, CredentialAccount and
// EnrollmentPolicy Ready, as it was on the previous release (ready holds
// their Ready status then, by namespace/name, when not nil).
func allReady(g Gomega, tn *tenant, before map[string]bool) map[string]bool {
	ctx := context.Background()
	now := map[string]bool{}
	var anchors trustv1.TrustAnchorList
	g.Expect(env.Client.List(ctx, &anchors)).To(Succeed())
	for i := range anchors.Items {
		now["TrustAnchor "+anchors.Items[i].Namespace+"/"+anchors.Items[i].Name] = conditions.IsReady(&anchors.Items[i])
	}
	var accts credv1.CredentialAccountList
	g.Expect(env.Client.List(ctx, &accts, client.InNamespace(tn.ns))).To(Succeed())
	for i := range accts.Items {
		now["CredentialAccount "+accts.Items[i].Name] = conditions.IsReady(&accts.Items[i])
	}
	var ps enrollv1.EnrollmentPolicyList
	g.Expect(env.Client.List(ctx, &ps, client.InNamespace(tn.ns))).To(Succeed())
	for i := range ps.Items {
		now["EnrollmentPolicy "+ps.Items[i].Name] = conditions.IsReady(&ps.Items[i])
	}
	if before != nil {
		g.Expect(now).To(Equal(before), "Ready after the upgrade as before it")
	}
	return now
}
