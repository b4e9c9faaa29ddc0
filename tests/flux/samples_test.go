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

package flux

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// installVariants are the two ways of installing credo through Flux, with
// the kind of their source and the root of its artifact in the repository.
var installVariants = []struct {
	dir, sourceKind, artifactRoot string
}{
	{dir: "git", sourceKind: "GitRepository", artifactRoot: "."},
	{dir: "oci", sourceKind: "OCIRepository", artifactRoot: "config"},
}

func TestInstallSamplesAreValidFluxObjects(t *testing.T) {
	for _, v := range installVariants {
		t.Run(v.dir, func(t *testing.T) {
			g := NewWithT(t)
			objs := build(g, repoPath("config", "samples", "flux", v.dir))
			g.Expect(byKind(objs, v.sourceKind)).To(HaveLen(1))
			g.Expect(byKind(objs, "Kustomization")).To(HaveLen(2))
			g.Expect(objs).To(HaveLen(3))
			dryRunAll(g, objs)

			// An upgrade is a change of the source's tag.
			src := byKind(objs, v.sourceKind)[0]
			var tag string
			switch v.sourceKind {
			case sourcev1.GitRepositoryKind:
				var repo sourcev1.GitRepository
				g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(src.Object, &repo)).To(Succeed())
				g.Expect(repo.Spec.Reference).NotTo(BeNil())
				tag = repo.Spec.Reference.Tag
			case sourcev1.OCIRepositoryKind:
				var repo sourcev1.OCIRepository
				g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(src.Object, &repo)).To(Succeed())
				g.Expect(repo.Spec.Reference).NotTo(BeNil())
				tag = repo.Spec.Reference.Tag
			}
			g.Expect(tag).To(MatchRegexp(`^v\d+\.\d+\.\d+$`), "the source pins a release")
		})
	}
}

func TestStrictValidationRefusesATypoInASample(t *testing.T) {
	g := NewWithT(t)
	objs := build(g, repoPath("config", "samples", "flux", "git"))
	ks := byKind(objs, "Kustomization")[0].DeepCopy()
	checks, _, _ := unstructured.NestedSlice(ks.Object, "spec", "healthChecks")
	g.Expect(unstructured.SetNestedSlice(ks.Object, checks, "spec", "healthCheck")).To(Succeed())
	err := dryRun(context.Background(), ks)
	g.Expect(err).To(HaveOccurred(), "spec.healthCheck is not a field of a Kustomization")
	g.Expect(isInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("healthCheck"))
}

// kustomizations returns the install Kustomizations of a variant by name.
func kustomizations(g Gomega, dir string) map[string]*kustomizev1.Kustomization {
	out := map[string]*kustomizev1.Kustomization{}
	for _, o := range byKind(build(g, repoPath("config", "samples", "flux", dir)), "Kustomization") {
		var ks kustomizev1.Kustomization
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &ks)).To(Succeed())
		out[ks.Name] = &ks
	}
	g.Expect(out).To(HaveKey("credo"))
	g.Expect(out).To(HaveKey("credo-access-api"))
	return out
}

// healthChecked returns "Kind namespace/name" of a Kustomization's health checks.
func healthChecked(ks *kustomizev1.Kustomization) []string {
	var out []string
	for _, h := range ks.Spec.HealthChecks {
		out = append(out, h.Kind+" "+h.Namespace+"/"+h.Name)
	}
	return out
}

// rendered returns "Kind namespace/name" of the objects of kind a
// kustomization renders.
func rendered(g Gomega, dir, kind string) []string {
	var out []string
	for _, o := range byKind(build(g, dir), kind) {
		out = append(out, kind+" "+o.GetNamespace()+"/"+o.GetName())
	}
	g.Expect(out).NotTo(BeEmpty(), "%s renders no %s", dir, kind)
	return out
}

func TestInstallHealthChecksWaitForEveryDeploymentAndTheAPIService(t *testing.T) {
	for _, v := range installVariants {
		t.Run(v.dir, func(t *testing.T) {
			g := NewWithT(t)
			ks := kustomizations(g, v.dir)
			credo, access := ks["credo"], ks["credo-access-api"]
			for _, k := range ks {
				g.Expect(k.Spec.SourceRef.Kind).To(Equal(v.sourceKind))
				g.Expect(k.Spec.SourceRef.Name).To(Equal("credo"))
				_, err := os.Stat(repoPath(v.artifactRoot, k.Spec.Path, "kustomization.yaml"))
				g.Expect(err).NotTo(HaveOccurred(), "%s: path %s is a kustomization in the artifact", k.Name, k.Spec.Path)
			}
			defaultDir := repoPath(v.artifactRoot, credo.Spec.Path)
			g.Expect(filepath.Base(defaultDir)).To(Equal("default"))
			g.Expect(healthChecked(credo)).To(ConsistOf(rendered(g, defaultDir, "Deployment")))

			apiDir := repoPath(v.artifactRoot, access.Spec.Path)
			g.Expect(filepath.Base(apiDir)).To(Equal("apiservice"))
			g.Expect(access.Spec.DependsOn).To(ConsistOf(HaveField("Name", "credo")))
			g.Expect(access.Spec.TargetNamespace).To(BeEmpty(), "the APIService's RoleBinding lives in kube-system")
			g.Expect(healthChecked(access)).To(ConsistOf(rendered(g, apiDir, "APIService")))
			g.Expect(access.Spec.HealthCheckExprs).To(ConsistOf(HaveField("Kind", "APIService")))
		})
	}
}

// The expression that makes the APIService health check wait for
// Available, evaluated as kustomize-controller does, on APIServices of the
// real API server.
func TestAPIServiceHealthCheckWaitsForAvailable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	exprs := kustomizations(g, "git")["credo-access-api"].Spec.HealthCheckExprs
	g.Expect(exprs).To(HaveLen(1))
	eval, err := fluxcel.NewStatusEvaluator(&exprs[0].HealthCheckExpressions)
	g.Expect(err).NotTo(HaveOccurred())
	statusOf := func(name string) status.Status {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Name: name}, u)).To(Succeed())
		res, err := eval.Evaluate(ctx, u)
		g.Expect(err).NotTo(HaveOccurred())
		return res.Status
	}

	// Served by kube-apiserver itself: Available.
	g.Eventually(func() status.Status { return statusOf("v1.apps") }, 30*time.Second, 200*time.Millisecond).
		Should(Equal(status.CurrentStatus))

	// credo's, with no credential-controller behind its Service: not Available.
	apisvc := byKind(build(g, repoPath("config", "apiservice")), "APIService")[0]
	g.Expect(env.Client.Create(ctx, apisvc.DeepCopy())).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), apisvc.DeepCopy()) })
	g.Eventually(func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
		if env.Client.Get(ctx, client.ObjectKeyFromObject(apisvc), u) != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return len(conds) > 0
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue(), "kube-apiserver judges the APIService's availability")
	g.Expect(statusOf(apisvc.GetName())).To(Equal(status.InProgressStatus))
}
