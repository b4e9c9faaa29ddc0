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

// Command credential-controller keeps the Secrets of CredentialAccounts:
// verifier-only, NotIssued until a mint, owned by the release. It also
// serves access.credo.dev, the aggregated API that mints and revokes, on
// every replica (only the reconcilers are leader-elected).
package main

import (
	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/credo-dev/credo/controllers/credentials"
	"github.com/credo-dev/credo/internal/accessapi"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/manager"
)

func main() {
	var (
		opts       manager.Options
		credOpts   credentials.Options
		accessOpts = accessapi.NewOptions()
	)
	opts.BindFlags(pflag.CommandLine)
	credOpts.BindFlags(pflag.CommandLine)
	accessOpts.BindFlags(pflag.CommandLine)
	pflag.Parse()
	opts.ExitOnVersion(credentials.ControllerName)

	setup, err := manager.New(credentials.ControllerName, credentials.NewScheme(), opts, credentials.ConfigureCache)
	if err != nil {
		fail(err, "unable to set up manager")
	}
	ctx := ctrl.SetupSignalHandler()
	if err := credentials.Setup(ctx, setup, credOpts); err != nil {
		fail(err, "unable to set up the controllers")
	}
	if accessOpts.Enabled() {
		scheme := credentials.NewScheme()
		utilruntime.Must(apiregistrationv1.AddToScheme(scheme))
		if err := accessapi.AddToManager(ctx, setup, scheme, accessOpts, account.NewKeys(credOpts.AnnotationDomain)); err != nil {
			fail(err, "unable to set up the access API server")
		}
	}
	ctrl.Log.Info("starting manager")
	if err := setup.Manager.Start(ctx); err != nil {
		fail(err, "manager stopped with an error")
	}
}

func fail(err error, msg string) { manager.Exit(credentials.ControllerName, err, msg) }
