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

// Command dev runs the whole of credo locally for `make dev`: a from-source
// control plane, Flux's source-, kustomize-, helm- and notification-controller, credo
// installed from config/default and config/apiservice with its controllers
// running against it, and config/samples applied.
// It prints how to look around and stops everything on Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir := filepath.Join(controlplane.RepoRoot(), "bin", "dev")
	if err := os.RemoveAll(dir); err != nil {
		fail(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fail(err)
	}
	fmt.Println("credo dev: starting etcd, kube-apiserver, kube-controller-manager, Flux's controllers and credo's ...")
	// All four Flux controllers (make flux builds them), so that sources
	// and Kustomizations can be tried too; the e2e suite runs only
	// devenv.DefaultFlux.
	env, err := devenv.Start(ctx, devenv.Options{Dir: dir, Flux: controlplane.FluxControllers})
	if err != nil {
		fail(err)
	}
	printWelcome(env)

	<-ctx.Done()
	fmt.Println("\ncredo dev: stopping ...")
	if err := env.Stop(); err != nil {
		fail(err)
	}
	fmt.Println("credo dev: stopped")
}

func printWelcome(env *devenv.Environment) {
	kubectl := fmt.Sprintf("%s --kubeconfig %s", env.KubectlPath, env.Kubeconfig)
	fmt.Printf(`
credo is running on a local Kubernetes %s control plane.

  kubeconfig: %s
  logs:       %s/*.log

Look around (bin/ holds kubectl, flux and kubectl-credo; alias k='%s' works too):

  export KUBECONFIG=%s PATH=%s:$PATH
  kubectl get crds
  kubectl get credo-all -A
  kubectl credo get -n tenant-demo
  kubectl get helmreleases -A
  kubectl get trustsources
  kubectl get secrets -n tenant-demo -l internal.cozystack.io/tenant-ca=true
  kubectl describe trustanchor -n tenant-demo postgres-main
  kubectl get events -A
  flux events -A   # Warnings about a release show on its HelmRelease

Not Ready on purpose: these samples show credo's guards at work (kubectl describe says more):

`, controlplane.KubernetesVersion, env.Kubeconfig, env.Dir, kubectl, env.Kubeconfig, filepath.Join(controlplane.RepoRoot(), "bin"))
	for _, o := range devenv.FailingOnPurpose {
		name := o.Resource + "/" + o.Name
		if o.Namespace != "" {
			name = o.Namespace + " " + name
		}
		fmt.Printf("  %-35s %-20s %s\n", name, o.Reason, o.Why)
	}
	fmt.Printf("\nControllers:\n")
	for _, c := range env.Controllers {
		fmt.Printf("  %-24s metrics http://%s/metrics  health http://%s/readyz\n", c.Name, c.MetricsAddr, c.HealthAddr)
	}
	for _, name := range controlplane.FluxControllers {
		if c, ok := env.Flux.Controllers[name]; ok {
			fmt.Printf("  %-24s metrics http://%s/metrics  health http://%s/readyz\n", c.Name, c.MetricsAddr, c.HealthAddr)
		}
	}
	fmt.Printf(`
Act as a tenant: the user tenant-demo-admin is bound to admin in tenant-demo, with Flux's
flux-view and flux-edit aggregated into it as a platform that grants Flux's roles has them
(docs/security.md, "What each tenant reaches"); its kubeconfig's namespace is tenant-demo:

  export TENANT=%s
  kubectl --kubeconfig $TENANT get helmreleases
  kubectl --kubeconfig $TENANT auth can-i create accounts.access.credo.dev --subresource=mint   # yes: may mint
  kubectl --kubeconfig $TENANT patch helmrelease ch-logs --type=json \
    -p '[{"op":"remove","path":"/spec/valuesFrom/0"}]'   # refused: it delivers a platform account
`, env.DemoTenantKubeconfig)
	fmt.Printf(`
Enroll an agent (the enrollment listener is %s):

  kubectl get secret -n %s %s.tenant-ca -o jsonpath='{.data.ca\.crt}' | base64 -d > /tmp/credo-ca.pem
  kubectl credo token create web-and-db -n tenant-demo -o json | jq -r .token > /tmp/credo-token
  bin/credo-agent --server %s --ca-file /tmp/credo-ca.pem --token-file /tmp/credo-token --state-dir /tmp/credo-agent --label role=web
`, env.EnrollmentURL, devenv.PlatformNamespace, devenv.InstallRelease, env.EnrollmentURL)
	fmt.Println("\nPress Ctrl-C to stop.")
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "credo dev: %v\n", err)
	os.Exit(1)
}
