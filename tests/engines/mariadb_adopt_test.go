//go:build engines

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

package engines

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

// TestAnExistingMariaDBTakesTheRotatedRootFromItsOwnSecret is seed 002's
// "mariadb rootPasswordSecretKeyRef cant change once set": a MariaDB the
// chart rendered keeps reading root from <release>-credentials. The
// account names that key (spec.plaintext.secretRef), and the migration
// moves it to credo in its two phases, run through the command's own entry
// as the ServiceAccount of config/samples/migration:
//  1. before the chart switch, a run of the default phase lists the
//     release StillRendered and writes nothing; --phase=prepare stamps
//     helm.sh/resource-policy: keep;
//  2. the chart switch is a new Helm release (recorded, as helm-controller
//     records it, through Helm's own storage driver) that no longer renders
//     the Secret;
//  3. the run after it adopts the Secret and rotates root; the
//     credential-controller writes the new password into the key; the
//     MariaDB (driven as mariadb-operator drives it, reading the key the
//     CR names as the operator's ServiceAccount) takes it, and refuses the
//     chart's password, which the tenant could read. A second run writes
//     nothing.
func TestAnExistingMariaDBTakesTheRotatedRootFromItsOwnSecret(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// No helm-controller: the test records the releases as it would.
	env, err := devenv.Start(ctx, devenv.Options{Samples: "-", Flux: []string{controlplane.NotificationController}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c := env.Client
	op, operator := mariadbOperator(t, env)
	runAs, _ := migrationCommand(t, env)
	run := func(sec *secrets, args ...string) (string, int) {
		out, err := runAs(sec, args...)
		return out, exitCode(t, err)
	}
	sec := &secrets{}

	ns := "engines-adopt"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	kube, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	helm := storage.Init(driver.NewSecrets(kube.CoreV1().Secrets(ns)))
	hr := helmRelease(t, c, ns, "maria", "mariadb", false)
	// release records Helm release version v of the chart (rendering
	// maria-credentials or not) and reports it installed, as helm-controller
	// does.
	release := func(v int, rendersCredentials bool) {
		manifest := "---\n# Source: mariadb/templates/mariadb.yaml\napiVersion: k8s.mariadb.com/v1alpha1\nkind: MariaDB\nmetadata:\n  name: maria\n"
		if rendersCredentials {
			manifest += "---\n# Source: mariadb/templates/credentials.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: maria-credentials\n"
		}
		g.Expect(helm.Create(&rspb.Release{Name: hr.GetReleaseName(), Namespace: ns, Version: v, Manifest: manifest,
			Info: &rspb.Info{Status: common.StatusDeployed}})).To(Succeed())
		now := metav1.Now()
		markReady(t, c, hr, &helmv2.Snapshot{Name: hr.GetReleaseName(), Namespace: ns, Version: v, Status: "deployed",
			Digest: fmt.Sprintf("sha256:%064d", v), ChartName: "mariadb", ChartVersion: fmt.Sprintf("0.%d.0", v),
			ConfigDigest: fmt.Sprintf("sha256:%064d", 0), FirstDeployed: now, LastDeployed: now})
	}
	release(1, true)

	chartRoot, err := account.GeneratePassword()
	g.Expect(err).NotTo(HaveOccurred())
	sec.add(chartRoot)
	g.Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "maria-credentials", Namespace: ns,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "maria", "meta.helm.sh/release-namespace": ns}},
		Data: map[string][]byte{"root": []byte(chartRoot)},
	}, client.FieldOwner("helm"))).To(Succeed())
	m := startMariaDB(t, sec)
	m.mustAdmin(t, "initialise root", fmt.Sprintf("DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';\n"+
		"CREATE USER 'root'@'%%' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'%%' WITH GRANT OPTION;\n", chartRoot))

	g.Expect(c.Create(ctx, &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "maria-root", Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: "maria", Username: "root", Owner: credv1.OwnerPlatform,
			Format: credv1.Format{Name: verifier.Plain},
			Plaintext: &credv1.PlaintextDelivery{Consumers: []credv1.ServiceAccountRef{op},
				SecretRef: &credv1.SecretKeyRef{Name: "maria-credentials", Key: "root"}}},
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		var a credv1.CredentialAccount
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "maria-root"}, &a)).To(Succeed())
		g.Expect(conditions.GetReason(&a, credv1.DeliveryFailedCondition)).To(Equal(credv1.PlaintextSecretNotAdoptedReason))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	sec.add(string(accountSecret(t, c, ns, "maria", "root").Data[credv1.PasswordKey]))

	// rootKey reads root as the operator does: the key the MariaDB CR's
	// rootPasswordSecretKeyRef names.
	rootKey := func(g Gomega) (string, *corev1.Secret) {
		var s corev1.Secret
		g.Expect(operator.Get(ctx, client.ObjectKey{Namespace: ns, Name: "maria-credentials"}, &s)).To(Succeed())
		return string(s.Data["root"]), &s
	}

	out, code := run(sec, "-n", ns, "--apply")
	g.Expect(code).To(Equal(2), "the chart still renders the Secret: the release is listed")
	g.Expect(out).To(ContainSubstring("StillRendered"))
	v, s := rootKey(g)
	g.Expect(v == chartRoot).To(BeTrue(), "nothing written while the chart renders it")
	g.Expect(s.Annotations).NotTo(HaveKey("helm.sh/resource-policy"))

	out, code = run(sec, "-n", ns, "--phase=prepare", "--apply")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(MatchRegexp(`maria-root\s+root\s+platform\s+keep\s+BeforeSwitch`))
	v, s = rootKey(g)
	g.Expect(v == chartRoot).To(BeTrue(), "the prepare phase rotates nothing")
	g.Expect(s.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))

	release(2, false)
	out, code = run(sec, "-n", ns, "--apply")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(MatchRegexp(`maria-root\s+root\s+platform\s+adopt\s+NoLongerRendered`))

	// The operator sees the watched Secret change and applies the new value.
	var rotated string
	g.Eventually(func(g Gomega) {
		rotated, _ = rootKey(g)
		g.Expect(rotated == chartRoot).To(BeFalse())
		g.Expect(rotated == string(accountSecret(t, c, ns, "maria", "root").Data[credv1.PasswordKey])).To(BeTrue())
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	sec.add(rotated)
	m.mustAdmin(t, "apply the rotated root password", fmt.Sprintf("ALTER USER 'root'@'%%' IDENTIFIED BY '%s';\n", rotated))
	g.Expect(m.login("root", rotated).ok()).To(BeTrue(), "root logs in with the rotated password")
	g.Expect(m.login("root", chartRoot).ok()).To(BeFalse(), "the chart's password, which the tenant could read, is refused")
	var kept corev1.Secret
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: devenv.PlatformNamespace, Name: ns + ".maria.root.account"}, &kept)).To(Succeed())
	g.Expect(string(kept.Data[credv1.PasswordKey]) == rotated).To(BeTrue(), "the kept copy is the value the server took")
	_, s = rootKey(g)
	g.Expect(s.Labels).NotTo(HaveKey("app.kubernetes.io/managed-by"), "adopted: no Helm release takes it back")
	g.Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", hr.UID)), "collected with the release")
	waitReady(t, c, ns)

	settle(t, c, ns)
	before := versions(t, c, ns)
	out, code = run(sec, "-n", ns, "--apply")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(MatchRegexp(`maria-root\s+root\s+platform\s+skip\s+AlreadyRotated`))
	g.Expect(versions(t, c, ns)).To(Equal(before), "a second run writes nothing")
}
