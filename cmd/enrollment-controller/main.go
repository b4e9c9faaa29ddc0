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

// Command enrollment-controller enrolls workloads: it keeps the status of
// EnrollmentPolicies and Workloads (leader-elected), and on every replica
// serves the enrollment HTTPS listener agents call and keeps the embedded CA
// fresh. Join tokens are minted through the access API (credential-controller).
package main

import (
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	controllers "github.com/credo-dev/credo/controllers/enrollment"
	"github.com/credo-dev/credo/internal/manager"
)

func main() {
	var (
		opts       manager.Options
		enrollOpts controllers.Options
		listenOpts = controllers.NewListenerOptions()
	)
	opts.BindFlags(pflag.CommandLine)
	enrollOpts.BindFlags(pflag.CommandLine)
	listenOpts.BindFlags(pflag.CommandLine)
	pflag.Parse()
	opts.ExitOnVersion(controllers.ControllerName)
	if err := listenOpts.Validate(); err != nil {
		fail(err, "bad flags")
	}

	enrollOpts.Limits = listenOpts.Server.Limits
	setup, err := manager.New(controllers.ControllerName, controllers.NewScheme(), opts, controllers.ConfigureCache)
	if err != nil {
		fail(err, "unable to set up manager")
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.Setup(ctx, setup, enrollOpts); err != nil {
		fail(err, "unable to set up the controllers")
	}
	if err := controllers.AddListener(setup, listenOpts); err != nil {
		fail(err, "unable to set up the enrollment listener")
	}
	ctrl.Log.Info("starting manager")
	if err := setup.Manager.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

func fail(err error, msg string) { manager.Exit(controllers.ControllerName, err, msg) }
