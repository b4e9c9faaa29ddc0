//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/tests/devenv"
)

// The kinds credo's binaries write, with what writes them.
var writtenKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Secret"},    // projections, account Secrets, kept passwords, the CA, serving certificates
	{Version: "v1", Kind: "ConfigMap"}, // kubectl credo migrate's report
	{Version: "v1", Kind: "Event"},     // every controller's events
	{Version: "v1", Kind: "Service"},   // the access API's ExternalName Service
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
	{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"},
	{Group: "trust.credo.dev", Version: "v1alpha1", Kind: "TrustAnchor"},
	{Group: "trust.credo.dev", Version: "v1alpha1", Kind: "TrustSource"},
	{Group: "credentials.credo.dev", Version: "v1alpha1", Kind: "CredentialAccount"},
	{Group: "credentials.credo.dev", Version: "v1alpha1", Kind: "AccountSource"},
	{Group: "enrollment.credo.dev", Version: "v1alpha1", Kind: "EnrollmentPolicy"},
	{Group: "enrollment.credo.dev", Version: "v1alpha1", Kind: "JoinToken"},
	{Group: "enrollment.credo.dev", Version: "v1alpha1", Kind: "Workload"},
}

// Every write of credo's binaries carries the binary's one name as its
// field manager: the controllers' writes, the access API's (a mint, a join
// token), the enrollment listener's (a workload, a token's use), events
// and leases. A write that names no field manager would carry the binary's
// file name, which kube-apiserver takes from the user agent
// ("enrollment-controller"); none may. The test lists, per kind, the
// managers it found.
func TestEveryWriteCarriesItsBinarysOneName(t *testing.T) {
	e := needLocal(t)
	ctx := context.Background()
	g := NewWithT(t)

	// Writes of every door: a mint, a join token, an enrollment.
	g.Eventually(func() error {
		m := &accessv1.Mint{Spec: accessv1.AccountRequestSpec{Account: "postgres-main-alice"}}
		m.Namespace = "tenant-demo"
		return k8s.Create(ctx, m)
	}, 2*time.Minute, time.Second).Should(Succeed())
	ns := enrollmentNamespace(t, "writers-e2e")
	newEnrollmentPolicy(t, ns, time.Hour, time.Hour)
	token := createToken(t, e, ns, "agents")
	caFile, _ := anchorFile(t, 1)
	a := newAgent(t, "agent-writers", token, caFile, "--label=role=web")
	a.start(t, e, true)
	a.waitCert(t, nil, 30*time.Second)

	forbidden := map[string]bool{}
	for _, name := range devenv.Controllers {
		forbidden[name] = true // a binary's file name: a write that named no manager
	}
	ours := map[string]bool{fieldowner.TrustController: true, fieldowner.CredentialController: true, fieldowner.EnrollmentController: true}
	seen := map[string]bool{}
	var table, unnamed, foreign []string
	for _, gvk := range writtenKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		g.Expect(k8s.List(ctx, list)).To(Succeed(), gvk.Kind)
		managers := map[string]bool{}
		for _, obj := range list.Items {
			for _, mf := range obj.ManagedFields {
				managers[mf.Manager] = true
				seen[mf.Manager] = true
				where := fmt.Sprintf("%s %s/%s: %q", gvk.Kind, obj.Namespace, obj.Name, mf.Manager)
				switch {
				case forbidden[mf.Manager] || mf.Manager == "" || strings.HasPrefix(mf.Manager, "Go-http-client"):
					unnamed = append(unnamed, where)
				// devenv.FieldManager installs credo, as kustomize-controller would.
				case strings.Contains(mf.Manager, "credo") && !ours[mf.Manager] &&
					mf.Manager != fieldowner.Plugin && mf.Manager != fieldowner.Migrate && mf.Manager != devenv.FieldManager:
					foreign = append(foreign, where)
				}
			}
		}
		table = append(table, fmt.Sprintf("%-18s %s", gvk.Kind, strings.Join(sortedKeys(managers), ", ")))
	}
	g.Expect(unnamed).To(BeEmpty(), "writes that named no field manager")
	g.Expect(foreign).To(BeEmpty(), "writes under none of credo's names")
	t.Logf("managedFields managers per kind:\n%s", strings.Join(table, "\n"))
	for name := range ours {
		g.Expect(seen).To(HaveKey(name), "%s wrote something", name)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
