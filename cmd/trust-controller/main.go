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

// Command trust-controller projects the CA certificates of managed engines
// into key-free <release>.tenant-ca Secrets and records them in TrustAnchors.
package main

import (
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/credo-dev/credo/controllers/trust"
	"github.com/credo-dev/credo/internal/manager"
)

func main() {
	var (
		opts      manager.Options
		trustOpts trust.Options
	)
	opts.BindFlags(pflag.CommandLine)
	trustOpts.BindFlags(pflag.CommandLine)
	pflag.Parse()
	opts.ExitOnVersion(trust.ControllerName)

	setup, err := manager.New(trust.ControllerName, trust.NewScheme(), opts, trust.ConfigureCache)
	if err != nil {
		manager.Exit(trust.ControllerName, err, "unable to set up manager")
	}
	ctx := ctrl.SetupSignalHandler()
	if err := trust.Setup(ctx, setup, trustOpts); err != nil {
		manager.Exit(trust.ControllerName, err, "unable to set up the controllers")
	}
	ctrl.Log.Info("starting manager", "labelDomain", trustOpts.LabelDomain)
	if err := setup.Manager.Start(ctx); err != nil {
		manager.Exit(trust.ControllerName, err, "manager stopped with an error")
	}
}
