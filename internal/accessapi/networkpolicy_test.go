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
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/tests/controlplane"
)

// The NetworkPolicy component of config/apiservice, enabled as its
// kustomization says, selects the credential-controller's pods, admits
// only the ipBlock to the access API's port (the Service's target, the
// server's default) and leaves every other port of the Deployment open; the
// API server accepts it.
func TestNetworkPolicyAdmitsOnlyItsSourcesToTheAccessAPIPort(t *testing.T) {
	g := NewWithT(t)
	// kustomize takes no absolute paths: the kustomization of the temporary
	// directory names the repository's relative to itself.
	dir := t.TempDir()
	config, err := filepath.Rel(dir, filepath.Join(controlplane.RepoRoot(), "config"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"+
		"resources:\n- "+filepath.Join(config, "apiservice")+"\n- "+filepath.Join(config, "manager")+"\n"+
		"components:\n- "+filepath.Join(config, "apiservice", "networkpolicy")+"\n"), 0o600)).To(Succeed())
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	g.Expect(err).NotTo(HaveOccurred())

	var (
		policies   []networkingv1.NetworkPolicy
		deployment *appsv1.Deployment
		service    *corev1.Service
	)
	for _, r := range resMap.Resources() {
		m, err := r.Map()
		g.Expect(err).NotTo(HaveOccurred())
		switch {
		case r.GetKind() == "NetworkPolicy":
			var np networkingv1.NetworkPolicy
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(m, &np)).To(Succeed())
			policies = append(policies, np)
		case r.GetKind() == "Deployment" && r.GetName() == "credential-controller":
			deployment = &appsv1.Deployment{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(m, deployment)).To(Succeed())
		case r.GetKind() == "Service" && r.GetName() == accessapi.DefaultServiceName:
			service = &corev1.Service{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(m, service)).To(Succeed())
		}
	}
	g.Expect(policies).To(HaveLen(1))
	g.Expect(deployment).NotTo(BeNil())
	g.Expect(service).NotTo(BeNil())
	np := policies[0]
	g.Expect(np.Namespace).To(Equal(deployment.Namespace))
	g.Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
	g.Expect(labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels).Matches(labels.Set(deployment.Spec.Template.Labels))).To(BeTrue(), "the policy selects the credential-controller's pods")

	accessPort := service.Spec.Ports[0].TargetPort.IntValue()
	g.Expect(accessPort).To(Equal(accessapi.DefaultSecurePort))
	admitted := map[int]bool{} // port: admitted from anywhere
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			g.Expect(p.Port).NotTo(BeNil())
			port := p.Port.IntValue()
			if port == accessPort {
				g.Expect(rule.From).NotTo(BeEmpty(), "the access API's port is admitted from named sources only")
				for _, peer := range rule.From {
					g.Expect(peer.IPBlock).NotTo(BeNil())
					g.Expect(peer.IPBlock.CIDR).NotTo(Or(Equal("0.0.0.0/0"), Equal("::/0")))
				}
			}
			admitted[port] = len(rule.From) == 0
		}
	}
	g.Expect(admitted).To(HaveKeyWithValue(accessPort, false))
	for _, c := range deployment.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if int(p.ContainerPort) != accessPort {
				g.Expect(admitted).To(HaveKeyWithValue(int(p.ContainerPort), true), "port %s stays open", p.Name)
			}
		}
	}

	// The API server validates it.
	g.Expect(platform.Create(context.Background(), &np, client.DryRunAll)).To(Succeed())
}
