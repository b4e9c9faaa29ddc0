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

// Package e2e tests an installed credo from the outside, through a kubeconfig.
// With E2E_KUBECONFIG set it runs against that cluster (the kind job in
// .github/workflows/e2e.yaml, where credo runs from config/default and the
// samples are applied); without it, it starts the local development
// environment (tests/devenv) and runs against that.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/devenv"
)

var k8s client.Client

// restConfig is what k8s was made from.
var restConfig *rest.Config

// scheme knows the core, credo and Flux types the suite reads and writes.
func scheme() *runtime.Scheme {
	s := controlplane.NewScheme()
	utilruntime.Must(sourcev1.AddToScheme(s))
	utilruntime.Must(notificationv1.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return s
}

// dev is the local development environment, nil against E2E_KUBECONFIG.
var dev *devenv.Environment

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	local := os.Getenv("E2E_KUBECONFIG") == ""
	if err := excludeOtherMode(local); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if path := os.Getenv("E2E_KUBECONFIG"); path != "" {
		os.Setenv("KUBECONFIG", path)
		cfg, err := config.GetConfig()
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: loading %s: %v\n", path, err)
			return 1
		}
		restConfig = cfg
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme()}); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		return m.Run()
	}
	env, err := devenv.Start(ctx, devenv.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the development environment: %v\n", err)
		return 1
	}
	defer env.Stop()
	defer charts.close()
	restConfig = env.Config
	if k8s, err = client.New(env.Config, client.Options{Scheme: scheme()}); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	dev = env
	return m.Run()
}
