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

package accessapi_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// warningsSeen collects the Warning headers a client receives.
type warningsSeen struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningsSeen) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// take returns the warnings received since the last take.
func (w *warningsSeen) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.texts
	w.texts = nil
	return out
}

// warnedClient is a client of user that collects the Warning headers.
func warnedClient(t *testing.T, user string) (client.Client, *warningsSeen) {
	t.Helper()
	cfg, err := env.UserConfig(user, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := &warningsSeen{}
	cfg.WarningHandlerWithContext = seen
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, seen
}

// newAccountOf declares a CredentialAccount of the existing release and
// waits for the controller to write its Secret.
func newAccountOf(t *testing.T, ns, name, release, username string, values *credv1.ValuesFromTarget) {
	t.Helper()
	ctx := context.Background()
	a := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: credv1.CredentialAccountSpec{Release: release, Username: username,
			Format: credv1.Format{Name: verifier.SHA256Hex}, ValuesFrom: values},
	}
	NewWithT(t).Expect(platform.Create(ctx, a)).To(Succeed())
	NewWithT(t).Eventually(func() string {
		var s corev1.Secret
		_ = platform.Get(ctx, client.ObjectKey{Namespace: ns, Name: credv1.AccountSecretName(release, username)}, &s)
		return s.Annotations[keys.Origin]
	}, 30*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty(), "the account Secret is written")
}

func suspend(t *testing.T, ns, release string, suspended bool) {
	t.Helper()
	patch := `{"spec":{"suspend":false}}`
	if suspended {
		patch = `{"spec":{"suspend":true}}`
	}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: release}}
	NewWithT(t).Expect(platform.Patch(context.Background(), hr, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// A mint or a revocation of an account delivered through a suspended
// HelmRelease's valuesFrom succeeds (201) with a Warning header naming the
// suspension, which kubectl and client-go print; never the password. An
// account whose operator reads the Secret itself, or a release that is not
// suspended, gets none.
func TestMintForASuspendedReleaseWarns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	env.NewHelmRelease(t, ns, "ch", "clickhouse", nil)
	newAccountOf(t, ns, "ch-app", "ch", "app", &credv1.ValuesFromTarget{TargetPath: "users.app.password_sha256_hex"})
	newAccountOf(t, ns, "ch-reader", "ch", "reader", nil)
	_, user := newMinter(t, ns)
	c, seen := warnedClient(t, user)
	suspend(t, ns, "ch", true)

	m, err := mintAccount(ctx, c, ns, "ch-app", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Status.Password).NotTo(BeEmpty())
	warnings := seen.take()
	g.Expect(warnings).To(ConsistOf(
		"HelmRelease " + ns + "/ch is suspended (ReleaseSuspended): the new password reaches the engine only when it is resumed (flux resume helmrelease ch -n " + ns + ")"))
	g.Expect(strings.Contains(strings.Join(warnings, "\n"), m.Status.Password)).To(BeFalse(), "no warning holds the password (not printed)")

	_, err = revokeAccount(ctx, c, ns, "ch-app")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(seen.take()).To(ConsistOf(ContainSubstring("the engine keeps accepting the previous password until then")))

	_, err = mintAccount(ctx, c, ns, "ch-reader", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(seen.take()).To(BeEmpty(), "an account without valuesFrom does not wait for the release")

	suspend(t, ns, "ch", false)
	_, err = mintAccount(ctx, c, ns, "ch-app", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(seen.take()).To(BeEmpty(), "a resumed release gets no warning")
}
