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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
)

// The internal version is the same Go type: converting to v1alpha1 only
// sets the kind, and the object is otherwise untouched.
func TestSchemeConvertsInternalToV1alpha1(t *testing.T) {
	g := NewWithT(t)
	in := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: "db", ResourceVersion: "7"}}
	in.SetGroupVersionKind(accessapi.InternalGroupVersion.WithKind("Mint"))
	out, err := accessapi.Scheme.ConvertToVersion(in, accessv1.GroupVersion)
	g.Expect(err).NotTo(HaveOccurred())
	m, ok := out.(*accessv1.Mint)
	g.Expect(ok).To(BeTrue())
	g.Expect(m.GroupVersionKind()).To(Equal(accessv1.GroupVersion.WithKind("Mint")))
	g.Expect(m.Spec).To(Equal(in.Spec))

	back, err := accessapi.Scheme.ConvertToVersion(m, accessapi.InternalGroupVersion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.(*accessv1.Mint).Spec).To(Equal(in.Spec))
	// Internal objects carry no kind, by the scheme's convention.
	g.Expect(back.GetObjectKind().GroupVersionKind()).To(Equal(schema.GroupVersionKind{}))
}

// kubectl create -f mint.yaml -o yaml works, as a user with the mint Role.
func TestKubectlCreateMint(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	_, user := newMinter(t, ns)
	kubeconfig, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	manifest := filepath.Join(t.TempDir(), "mint.yaml")
	g.Expect(os.WriteFile(manifest, []byte("apiVersion: access.credo.dev/v1alpha1\nkind: Mint\nmetadata:\n  name: db\n  namespace: "+ns+"\nspec:\n  account: db\n"), 0o600)).To(Succeed())

	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	kubectl := filepath.Join(assets, "kubectl")
	create := func(kubeconfig string, extra ...string) *accessv1.Mint {
		args := append([]string{"--kubeconfig", kubeconfig, "create", "-f", manifest, "-o", "yaml"}, extra...)
		cmd := exec.Command(kubectl, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		g.Expect(cmd.Run()).To(Succeed(), "kubectl: %s", stderr.String())
		var m accessv1.Mint
		g.Expect(yaml.Unmarshal([]byte(stdout.String()), &m)).To(Succeed())
		g.Expect(m.Kind).To(Equal("Mint"))
		g.Expect(m.Status.SecretName).To(Equal(s.Name))
		g.Expect(matches(verifier.SHA256Hex, string(secretOf(g, ns, s.Name).Data["password"]), m.Status.Password)).To(BeTrue(),
			"kubectl printed the minted password (value not printed)")
		return &m
	}
	// An admin, with kubectl's default (strict) validation: kubectl finds no
	// PATCH operation for a create-only kind, so it validates client-side
	// against the aggregated OpenAPI schema, after checking the kind is no
	// CRD (listing CRDs).
	create(env.Kubeconfig)
	// A tenant who may only create mints cannot list CRDs: kubectl needs
	// --validate=false (the server still decodes strictly).
	create(kubeconfig, "--validate=false")

	// The API is discoverable and explained by its OpenAPI schema.
	out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "explain", "mints.spec.account").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(ContainSubstring("CredentialAccount"))
	out, err = exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "api-resources", "--api-group", "access.credo.dev", "-o", "wide").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	g.Expect(string(out)).To(And(MatchRegexp(`(?m)^mints\s.*\sMint\s+create\s`), MatchRegexp(`(?m)^revocations\s.*\sRevocation\s+create\s`)))
}
