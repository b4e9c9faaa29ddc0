//go:build ignore

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

// Command cert-manager-controller runs cert-manager's own controllers (the
// packages of github.com/cert-manager/cert-manager/pkg/controller, as
// released) in one process, as cert-manager's controller binary does. That
// binary's main package lives in the nested module
// github.com/cert-manager/cert-manager/cmd/controller, which is not tagged
// and so not served by the Go module proxy: hack/build-cert-manager.sh builds
// this small launcher instead, in a wrapper module that requires the released
// cert-manager module. What it adds is only the wiring of cmd/controller/app:
// the controller context built by cert-manager's ContextFactory, the chosen
// controllers constructed from cert-manager's registry, the shared informers
// started, each controller run with five workers. No leader election, no
// metrics or health listener.
//
// Only the controllers of the CA and self-signed issuers, the issuers'
// readiness and the approver are linked in (the ACME, Vault and Venafi
// issuers bring cloud SDKs credo's tests do not need). It is built with the
// ignore tag so that credo's module never compiles it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// The controllers, registered with controller.Register by their init.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The issuer types whose readiness the issuers controllers check.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// defaultControllers are cert-manager's defaults among those linked in.
const defaultControllers = "issuers,clusterissuers,certificaterequests-approver," +
	"certificaterequests-issuer-ca,certificaterequests-issuer-selfsigned"

func main() {
	var opts controller.ContextOptions
	var controllers string
	flag.StringVar(&opts.Kubeconfig, "kubeconfig", "", "The kubeconfig to reach the API server with (default: in-cluster).")
	flag.StringVar(&opts.Namespace, "namespace", "", "The only namespace to watch (default: all).")
	flag.StringVar(&opts.ClusterResourceNamespace, "cluster-resource-namespace", "cert-manager",
		"The namespace of the Secrets ClusterIssuers refer to.")
	flag.StringVar(&controllers, "controllers", defaultControllers, "The controllers to run, comma-separated.")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()
	logf.InitLogs()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	if err := run(ctx, opts, strings.Split(controllers, ",")); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-controller: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts controller.ContextOptions, names []string) error {
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	known := controller.Known()
	loops := map[string]controller.Interface{}
	for _, name := range names {
		construct, ok := known[name]
		if !ok {
			var all []string
			for n := range known {
				all = append(all, n)
			}
			slices.Sort(all)
			return fmt.Errorf("unknown controller %q (linked in: %s)", name, strings.Join(all, ","))
		}
		if loops[name], err = construct(factory); err != nil {
			return fmt.Errorf("constructing controller %s: %w", name, err)
		}
	}
	// The informers the constructors asked for are shared by every Context
	// the factory builds: start them once, after all are registered.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	log := logf.FromContext(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, len(loops))
	for name, loop := range loops {
		wg.Go(func() {
			log.Info("starting controller", "controller", name)
			if err := loop.Run(5, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", name, err)
				cancel() // one loop failed: stop them all, and exit
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
