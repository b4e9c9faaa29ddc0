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
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// categoryMember is a resource of a category, as discovery lists it.
type categoryMember struct {
	resource   string // <plural>.<group>
	namespaced bool
}

// categories reads every category of the served API from discovery, the
// CRDs' and the aggregated access API's alike, as kubectl expands them.
func categories(g Gomega) map[string][]categoryMember {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	lists, err := dc.ServerPreferredResources()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string][]categoryMember{}
	for _, l := range lists {
		group, _, _ := strings.Cut(l.GroupVersion, "/")
		for _, r := range l.APIResources {
			for _, c := range r.Categories {
				out[c] = append(out[c], categoryMember{resource: r.Name + "." + group, namespaced: r.Namespaced})
			}
		}
	}
	return out
}

var installTenantRoles sync.Once

// tenantRoles creates the ClusterRoles credo aggregates into view, edit
// and admin (config/rbac and config/apiservice), once.
func tenantRoles(t *testing.T) {
	t.Helper()
	installTenantRoles.Do(func() {
		for _, dir := range []string{"config/rbac", "config/apiservice"} {
			objs, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.GetKind() != "ClusterRole" || !aggregated(o) {
					continue
				}
				if err := platform.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("creating ClusterRole %s: %v", o.GetName(), err)
				}
			}
		}
	})
}

func aggregated(o *unstructured.Unstructured) bool {
	for k, v := range o.GetLabels() {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") && v == "true" {
			return true
		}
	}
	return false
}

// The category credo is what a tenant reads: only namespaced kinds, each
// of which the built-in view and edit roles may list, so that `kubectl get
// credo -n <namespace>` answers a tenant without a Forbidden error. The
// category credo-all holds every kind of credo's CRDs, the cluster-scoped
// rules included, for the platform's operators.
func TestTheCredoCategoryIsWhatATenantMayRead(t *testing.T) {
	g := NewWithT(t)
	cats := categories(g)
	var tenant []string
	for _, m := range cats["credo"] {
		g.Expect(m.namespaced).To(BeTrue(), "%s is in the tenants' category credo but is cluster-scoped", m.resource)
		tenant = append(tenant, m.resource)
	}
	g.Expect(tenant).To(ConsistOf("trustanchors.trust.credo.dev", "enrollmentpolicies.enrollment.credo.dev",
		"jointokens.enrollment.credo.dev", "workloads.enrollment.credo.dev", "accounts.access.credo.dev"))
	var all []string
	for _, m := range cats["credo-all"] {
		all = append(all, m.resource)
	}
	g.Expect(all).To(ConsistOf("trustanchors.trust.credo.dev", "trustsources.trust.credo.dev",
		"credentialaccounts.credentials.credo.dev", "accountsources.credentials.credo.dev",
		"enrollmentpolicies.enrollment.credo.dev", "jointokens.enrollment.credo.dev", "workloads.enrollment.credo.dev"))

	tenantRoles(t)
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	ns := newNamespace(t)
	newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	for _, role := range []string{"view", "edit"} {
		t.Run(role, func(t *testing.T) {
			g := NewWithT(t)
			user := "category-" + role + "-" + ns
			bindRole(t, ns, user, "ClusterRole", role)
			kubeconfig, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
			g.Expect(err).NotTo(HaveOccurred())
			// Role aggregation is asynchronous (kube-controller-manager).
			g.Eventually(func(g Gomega) {
				cmd := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfig, "get", "credo", "-n", ns, "-o", "name")
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				g.Expect(cmd.Run()).To(Succeed(), "kubectl get credo: %s", stderr.String())
				g.Expect(stderr.String()).NotTo(ContainSubstring("Forbidden"))
				g.Expect(strings.Fields(stdout.String())).To(ContainElement("account.access.credo.dev/db"),
					"the tenant sees its accounts through the view")
			}, 60*time.Second, 500*time.Millisecond).Should(Succeed())
		})
	}
}
