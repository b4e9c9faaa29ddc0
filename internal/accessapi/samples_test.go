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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
)

// TestAccessSamplesCreate creates config/samples/access with kubectl, as its
// README says, against accounts and a policy named as in tenant-demo.
func TestAccessSamplesCreate(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	s := newAccount(t, ns, "postgres-main-app", "app", verifier.SCRAMSHA256, credv1.OwnerTenant)
	newEnrollmentPolicy(t, ns, "web-and-db", false)
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	create := func(file string) string {
		path := filepath.Join(controlplane.RepoRoot(), "config", "samples", "access", file)
		cmd := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", env.Kubeconfig, "create", "-n", ns, "-f", path, "-o", "yaml")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		g.Expect(cmd.Run()).To(Succeed(), "kubectl create -f %s: %s", file, stderr.String())
		return stdout.String()
	}

	var m accessv1.Mint
	g.Expect(yaml.Unmarshal([]byte(create("mint.yaml")), &m)).To(Succeed())
	g.Expect(m.Status.SecretName).To(Equal(s.Name))
	g.Expect(matches(verifier.SCRAMSHA256, string(secretOf(g, ns, s.Name).Data["password"]), m.Status.Password)).To(BeTrue(),
		"the sample's mint stored the verifier of the password it returned (value not printed)")

	var rv accessv1.Revocation
	g.Expect(yaml.Unmarshal([]byte(create("revocation.yaml")), &rv)).To(Succeed())
	g.Expect(rv.Status.SecretName).To(Equal(s.Name))
	g.Expect(secretOf(g, ns, s.Name).Annotations[keys.Origin]).To(Equal(string(credv1.OriginRevoked)))

	var jt accessv1.JoinTokenRequest
	g.Expect(yaml.Unmarshal([]byte(create("jointokenrequest.yaml")), &jt)).To(Succeed())
	_, err = jointoken.Parse(jt.Status.Token)
	g.Expect(err).NotTo(HaveOccurred(), "the sample's token request returned a token")
}
