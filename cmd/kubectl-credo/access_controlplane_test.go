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

package main

import (
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A mint, a revocation or a join token that kube-apiserver refuses names
// the `kubectl auth can-i` check of the right it needs, with the
// subresource as --subresource: "accounts.access.credo.dev/mint" would ask
// about an account named mint.
func TestARefusalNamesTheCanICheckOfTheRight(t *testing.T) {
	env := controlPlane(t)
	g := NewWithT(t)
	kubeconfig, err := env.WriteKubeconfig("no-rights", nil, "no-rights.kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	const ns = "refusals"

	for _, c := range []struct {
		args  []string
		check string
	}{
		{[]string{"mint", "db", "--force", "-o", "json"}, "create accounts.access.credo.dev --subresource=mint"},
		{[]string{"revoke", "db", "--force"}, "create accounts.access.credo.dev --subresource=revocation"},
		{[]string{"token", "create", "web", "-o", "json"}, "create jointokenrequests.access.credo.dev"},
	} {
		_, err := plugin(kubeconfig, append(c.args, "-n", ns)...)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v: %v", c.args, err)
		g.Expect(err).To(MatchError(HaveSuffix("(check the right with: kubectl auth can-i "+c.check+" -n "+ns+")")), "%v", c.args)
	}
}
