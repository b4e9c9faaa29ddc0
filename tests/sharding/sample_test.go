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

package sharding

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// TestShardingSampleRunsAMainAndThreeShards renders config/samples/sharding
// with kubectl's kustomize and checks it: every controller runs as a main
// Deployment for the objects without a shard key and one Deployment per
// shard, each with its own pod selector, and the whole is accepted by the
// API server (server-side dry run, strict field validation).
func TestShardingSampleRunsAMainAndThreeShards(t *testing.T) {
	g := NewWithT(t)
	assets, err := controlplane.AssetsDir()
	g.Expect(err).NotTo(HaveOccurred())
	kubectl := filepath.Join(assets, "kubectl")
	sample := filepath.Join(controlplane.RepoRoot(), "config", "samples", "sharding")
	rendered, err := exec.Command(kubectl, "kustomize", sample).Output()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl kustomize %s", sample)

	selectors := map[string]string{}
	args := map[string][]string{}
	dec := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(rendered)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		var d appsv1.Deployment
		g.Expect(yaml.Unmarshal(doc, &d)).To(Succeed())
		if d.Kind != "Deployment" {
			continue
		}
		sel, err := yaml.Marshal(d.Spec.Selector.MatchLabels)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(selectors).NotTo(ContainElement(string(sel)), "Deployment %s shares its pod selector", d.Name)
		selectors[d.Name] = string(sel)
		args[d.Name] = d.Spec.Template.Spec.Containers[0].Args
	}
	for _, c := range controllers {
		g.Expect(args[c]).To(ContainElement("--watch-label-selector=!"+shard.Key), "%s serves what no shard claims", c)
		for _, s := range []string{"shard1", "shard2", "shard3"} {
			name := c + "-" + s
			g.Expect(args).To(HaveKey(name))
			g.Expect(args[name]).To(ContainElement("--watch-label-selector="+shard.Key+"="+s), name)
			g.Expect(args[name]).To(ContainElement("--enable-leader-election"), name)
			g.Expect(strings.Join(args[name], " ")).NotTo(ContainSubstring("!"+shard.Key), name)
		}
	}
	g.Expect(args).To(HaveLen(4*len(controllers)), "no other Deployment")

	env := testenv.ControlPlane(t, controlplane.Options{NoControllerManager: true})
	// A dry run creates nothing: the namespace the objects go to must exist.
	g.Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "credo-system"}})).To(Succeed())
	cmd := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "--force-conflicts",
		"--dry-run=server", "--validate=strict", "-f", "-")
	cmd.Stdin = bytes.NewReader(rendered)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
	}
}
