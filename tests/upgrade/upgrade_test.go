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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/enrolldriver"
	"github.com/credo-dev/credo/tests/fluxinstall"
	"github.com/credo-dev/credo/tests/testenv"
)

// rolloutGrace is how long after the last controller of the new release is
// ready an operation may still fail: kube-apiserver's aggregator finds the
// restarted access API available again on its next check of the
// APIService, a renewal's connection opened to the stopped listener times
// out. With processes standing in for pods, a rollout stops each
// controller and starts its successor (one replica, no surge): mints,
// renewals and rotations may fail, or wait, from the first stop to this
// long after the last start, and at no other time.
const rolloutGrace = 10 * time.Second

// The upgrade an operator makes: credo of the previous release, installed
// through Flux from its artifacts, with tenants' state and agents of both
// versions; the OCIRepository's tag changed to the working tree's release
// while mints, renewals and CA rotations run. Outside the rollout no
// operation fails; the CRDs are upgraded in place (same UIDs, the new
// schema served); nothing tenants were not asked to change is written (the
// projection of the release not rotated, the account Secrets not minted,
// the kept platform password, the enrollment CA); no agent enrolls again;
// an agent of the previous release renews against the new server, as one
// of the working tree renewed against the previous server; and everything
// Ready before is Ready after.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	t.Logf("upgrading from %s (commit %s) to the working tree", prev.Tag, prev.Commit)
	flux, err := env.StartFlux(ctx, controlplane.FluxOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = flux.Stop() })
	pub, err := os.ReadFile(filepath.Join(curDir, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	prevPub, err := os.ReadFile(filepath.Join(prev.Dir, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(prevPub).To(Equal(pub), "both releases are signed with the one key")
	createPublicKeySecret(t, g, pub)

	// The previous release, installed from its artifacts.
	in := &install{flux: flux, enrollAddr: testenv.FreeAddr(t), procs: map[string]*controlplane.Process{},
		access: fluxinstall.AccessAPI{Dir: filepath.Join(env.Dir, "access-api"), Port: testenv.FreePort(t)}}
	t.Cleanup(in.stop)
	prevDigest, err := prev.digest(publish.ImageName + ":" + prev.Tag)
	g.Expect(err).NotTo(HaveOccurred())
	in.apply(t, g, prev.Tag)
	in.rollOut(t, g, image(prevDigest), prev.binaries())
	waitForKustomization(g, "credo", prev.Tag, 3*time.Minute)
	waitForKustomization(g, "credo-access-api", prev.Tag, 2*time.Minute)

	// Tenants' state, and agents: one of each version's credo-agent, and
	// the working tree's enrollment library driven in-process.
	tn := newTenant(t, g)
	caFile, roots := enrollmentCA(t, g)
	server := "https://localhost" + in.enrollAddr[len("127.0.0.1"):]
	oldAgent := startAgent(t, g, "old-agent", prev.binaries(), server, caFile, tn.token)
	newAgent := startAgent(t, g, "new-agent", curBinaries(), server, caFile, tn.token)
	lib, err := enrolldriver.NewAgent(roots)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lib.Enroll(server, tn.token)).To(Succeed(), "the working tree's library enrolls with the previous server")
	// An agent of the working tree renews against the previous server.
	renewed := func(g Gomega, hostname string, atLeast int64) int64 {
		n := renewals(g, tn.ns)[hostname]
		g.Expect(n).To(BeNumerically(">=", atLeast), "%s's renewals", hostname)
		return n
	}
	g.Eventually(func(g Gomega) {
		renewed(g, oldAgent, 1)
		renewed(g, newAgent, 1)
	}, 3*certificateTTL, time.Second).Should(Succeed(), "both agents renew against the previous server")
	g.Expect(lib.Renew(server)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(allReady(g, tn, nil)).To(HaveKeyWithValue("TrustAnchor "+tn.ns+"/cache", true))
	}, time.Minute, time.Second).Should(Succeed())
	readyBefore := allReady(g, tn, nil)
	written, replaced := tn.snapshot(g)
	oldBefore := renewed(g, oldAgent, 1)

	// The upgrade under load.
	l := startLoad(tn, lib, server)
	time.Sleep(10 * time.Second) // the load on the previous release
	setTag(g, currentTag)
	w := window{from: time.Now()}
	in.rollOut(t, g, image(cur.Image.Digest.String()), curBinaries())
	w.to = time.Now().Add(rolloutGrace)
	t.Logf("the controllers rolled out in %s", time.Since(w.from).Round(100*time.Millisecond))
	waitForKustomization(g, "credo", currentTag, 3*time.Minute)
	waitForKustomization(g, "credo-access-api", currentTag, 2*time.Minute)
	// An agent of the previous release renews against the new server.
	g.Eventually(func(g Gomega) { renewed(g, oldAgent, oldBefore+2) }, 4*certificateTTL, time.Second).
		Should(Succeed(), "the previous release's agent renews against the new server")
	if d := time.Until(w.to.Add(15 * time.Second)); d > 0 {
		time.Sleep(d) // the load on the new release
	}
	l.stop()

	summary, outside, after := l.report(w)
	t.Logf("load: %s", summary)
	if len(outside) > 10 {
		outside = append(outside[:10], fmt.Sprintf("and %d more", len(outside)-10))
	}
	g.Expect(outside).To(BeEmpty(), "operations failed outside the rollout:\n%s", strings.Join(outside, "\n"))
	g.Expect(after).To(And(HaveKeyWithValue("mint", BeNumerically(">", 10)), HaveKeyWithValue("renewal", BeNumerically(">", 10)),
		HaveKeyWithValue("rotation", BeNumerically(">=", 2))), "operations succeed on the new release")

	for _, k := range written {
		k.Unchanged(g, env.Client)
	}
	for _, k := range replaced {
		k.Same(g, env.Client)
	}
	crdsUpgraded(g)
	g.Expect(renewals(g, tn.ns)).To(HaveLen(3), "no agent enrolled again")
	for _, a := range []string{oldAgent, newAgent} {
		g.Expect(agentProcs[a].Exited()).To(BeFalse(), "%s runs on", a)
	}
	g.Eventually(func(g Gomega) { allReady(g, tn, readyBefore) }, time.Minute, time.Second).Should(Succeed())
}

// crdsUpgraded expects each of credo's CRDs to serve the working tree's
// release's schema, with its labels and annotations.
func crdsUpgraded(g Gomega) {
	want, err := testenv.Kustomize(filepath.Join(curDir, "manifests", "crd"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(want).To(HaveLen(7))
	for _, u := range want {
		var crd apiextensionsv1.CustomResourceDefinition
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd)).To(Succeed())
		var live apiextensionsv1.CustomResourceDefinition
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: crd.Name}, &live)).To(Succeed())
		g.Expect(live.Spec.Versions).To(HaveLen(len(crd.Spec.Versions)), crd.Name)
		for i, v := range crd.Spec.Versions {
			g.Expect(live.Spec.Versions[i].Name).To(Equal(v.Name))
			g.Expect(live.Spec.Versions[i].Schema).To(Equal(v.Schema), "CRD %s %s serves the new schema", crd.Name, v.Name)
		}
		for k, v := range crd.Labels {
			g.Expect(live.Labels).To(HaveKeyWithValue(k, v), crd.Name)
		}
		for k, v := range crd.Annotations {
			g.Expect(live.Annotations).To(HaveKeyWithValue(k, v), crd.Name)
		}
	}
}

// renewals are the renewals of each Workload of ns, by hostname.
func renewals(g Gomega, ns string) map[string]int64 {
	var ws enrollv1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &ws, client.InNamespace(ns))).To(Succeed())
	out := map[string]int64{}
	for _, w := range ws.Items {
		out[w.Spec.Hostname] = w.Status.Renewals
	}
	return out
}
