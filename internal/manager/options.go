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

// Package manager builds the controller-runtime manager every credo controller
// binary runs: Flux's client, logger, leader election and event options, the
// metrics endpoint and the health probes, configured the same way everywhere.
package manager

import (
	"github.com/fluxcd/pkg/runtime/client"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/spf13/pflag"

	"github.com/credo-dev/credo/internal/shard"
)

const (
	flagMetricsAddr = "metrics-addr"
	flagHealthAddr  = "health-addr"
	flagEventsAddr  = "events-addr"
	flagVersion     = "version"
	// flagWatchLabelSelector is the one flag of Flux's WatchOptions credo
	// binds: credo serves all namespaces, and reads the Secrets it needs
	// whatever their labels.
	flagWatchLabelSelector = "watch-label-selector"
)

// Options is the runtime configuration shared by credo's controller binaries.
//
// Bind it to the binary's flag set before parsing, then hand it to New:
//
//	var opts manager.Options
//	opts.BindFlags(pflag.CommandLine)
//	pflag.Parse()
//	opts.ExitOnVersion("trust-controller")
//	setup, err := manager.New("trust-controller", scheme, opts, nil)
type Options struct {
	// MetricsAddr is the address the Prometheus metrics endpoint binds to; "0" disables it.
	MetricsAddr string
	// HealthAddr is the address the liveness and readiness probes bind to; "0" disables them.
	HealthAddr string
	// EventsAddr is the URL of Flux's notification-controller event receiver;
	// empty records events to the Kubernetes API only.
	EventsAddr string
	// Version is --version: print the build (internal/version) and exit
	// (ExitOnVersion).
	Version bool

	Client         client.Options
	Logger         logger.Options
	LeaderElection leaderelection.Options
	// Watch holds --watch-label-selector: the shard this instance serves
	// (see Shard). Only its LabelSelector is bound.
	Watch fluxcontroller.WatchOptions
}

// BindFlags binds the options, and the Flux runtime options they embed, to fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, flagMetricsAddr, ":8080",
		"The address the metric endpoint binds to.")
	fs.StringVar(&o.HealthAddr, flagHealthAddr, ":9440",
		"The address the health endpoint binds to.")
	fs.StringVar(&o.EventsAddr, flagEventsAddr, "",
		"The address of the events receiver (Flux notification-controller).")
	fs.BoolVar(&o.Version, flagVersion, false,
		"Print the version, commit and Go version, and exit.")
	o.Client.BindFlags(fs)
	o.Logger.BindFlags(fs)
	o.LeaderElection.BindFlags(fs)
	watch := pflag.NewFlagSet("watch", pflag.ContinueOnError)
	o.Watch.BindFlags(watch)
	fs.AddFlag(watch.Lookup(flagWatchLabelSelector))
}

// Shard returns the shard --watch-label-selector describes: the
// unsharded zero Shard when the flag is empty.
func (o *Options) Shard() (shard.Shard, error) {
	return shard.New(o.Watch)
}

// LeaderElectionID is the lease name of the controller's leader election:
// one per shard, so that the instances of different shards each elect
// their own leader, as Flux controllers do.
func (o *Options) LeaderElectionID(controllerName string) string {
	id := controllerName + "-leader-election"
	if o.Watch.LabelSelector != "" {
		id = leaderelection.GenerateID(id, o.Watch.LabelSelector)
	}
	return id
}
