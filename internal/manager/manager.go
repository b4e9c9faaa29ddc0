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

package manager

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/fluxcd/pkg/runtime/client"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/fluxcd/pkg/runtime/metrics"
	"github.com/fluxcd/pkg/runtime/pprof"
	"github.com/fluxcd/pkg/runtime/probes"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/credo-dev/credo/internal/shard"
)

// EventCorrelatorCacheSize is the number of entries of each of the three
// LRU caches client-go's event correlator keeps (spam filter, aggregator,
// event log), instead of its default 4,096. They are keyed by object and
// event, and a controller that records an event per release filled them with
// 6.7 KiB a release (a heap profile of the trust-controller with 1,000
// releases: 37 % of its live heap). 512 still rate-limits and aggregates the
// objects that record events over and over, which is what they are for.
const EventCorrelatorCacheSize = 512

// EventBroadcaster gives o an event broadcaster whose correlator keeps
// EventCorrelatorCacheSize entries. controller-runtime does not stop a
// broadcaster it was given: call the function returned on the manager built
// from o, and the broadcaster stops with it. manager.New and the tests'
// managers both do.
func EventBroadcaster(o *ctrl.Options) func(ctrl.Manager) error {
	broadcaster := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: EventCorrelatorCacheSize}))
	o.EventBroadcaster = broadcaster //nolint:staticcheck // the one way to size the correlator
	return func(mgr ctrl.Manager) error {
		if err := mgr.Add(EveryReplica(func(ctx context.Context) error {
			<-ctx.Done()
			broadcaster.Shutdown()
			return nil
		})); err != nil {
			return fmt.Errorf("adding the event broadcaster's shutdown: %w", err)
		}
		return nil
	}
}

// EveryReplica is a runnable that runs on every replica, leader or not:
// the access API server, the enrollment listener, the event broadcaster's
// shutdown.
type EveryReplica manager.RunnableFunc

// Start runs f until ctx is done.
func (f EveryReplica) Start(ctx context.Context) error { return f(ctx) }

// NeedLeaderElection is false: every replica runs it.
func (EveryReplica) NeedLeaderElection() bool { return false }

// Setup holds what New builds for a controller binary.
type Setup struct {
	Manager  ctrl.Manager
	Recorder events.Recorder
	// Metrics records Flux's gotk_* reconcile metrics; New registers it
	// with controller-runtime's registry.
	Metrics *metrics.Recorder
	// Shard is the part of the objects this instance serves
	// (--watch-label-selector); the zero Shard serves all.
	Shard shard.Shard
}

// New sets the global logger from opts, logs the binary's build and
// registers its credo_build_info gauge (internal/version), loads the
// kubeconfig (exiting the process when there is none, as every Flux
// controller does), builds a manager named after the controller (its field
// manager and user agent, the leader election ID, one per shard of
// --watch-label-selector, and the events' reporting controller), registers
// the health probes and creates the Flux events recorder.
// configure, when not nil, adjusts the manager options (cache and client
// settings) before the manager is built; restricting the caches to the
// shard (Options.Shard) is the binary's to do, as only it knows its kinds.
func New(controllerName string, scheme *runtime.Scheme, opts Options, configure func(*ctrl.Options, shard.Shard)) (*Setup, error) {
	log := logger.NewLogger(opts.Logger)
	ctrl.SetLogger(log)
	if err := announceBuild(log, crmetrics.Registry, controllerName); err != nil {
		return nil, err
	}
	s, err := opts.Shard()
	if err != nil {
		return nil, err
	}
	if s.Sharded() {
		log.Info("serving one shard", "watchLabelSelector", s.String())
	}

	restConfig := client.GetConfigOrDie(opts.Client)

	mgrOpts := ctrl.Options{
		Scheme: scheme,
		// As Flux's controllers do, the metrics endpoint serves Go's
		// profiles under /debug/pprof (allocation sites and stacks; no
		// object is in them).
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr, ExtraHandlers: pprof.GetHandlers()},
		HealthProbeBindAddress:        opts.HealthAddr,
		LeaderElection:                opts.LeaderElection.Enable,
		LeaderElectionReleaseOnCancel: opts.LeaderElection.ReleaseOnCancel,
		LeaseDuration:                 &opts.LeaderElection.LeaseDuration,
		RenewDeadline:                 &opts.LeaderElection.RenewDeadline,
		RetryPeriod:                   &opts.LeaderElection.RetryPeriod,
		LeaderElectionID:              opts.LeaderElectionID(controllerName),
		Logger:                        log,
	}
	stopEvents := EventBroadcaster(&mgrOpts)
	if configure != nil {
		configure(&mgrOpts, s)
	}
	restConfig = Named(restConfig, &mgrOpts, controllerName)
	mgr, err := ctrl.NewManager(restConfig, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	probes.SetupChecks(mgr, log)
	if err := stopEvents(mgr); err != nil {
		return nil, err
	}

	recorder, err := events.NewRecorder(log, opts.EventsAddr, controllerName, events.WithManager(mgr))
	if err != nil {
		return nil, fmt.Errorf("creating event recorder: %w", err)
	}
	rec := metrics.NewRecorder()
	crmetrics.Registry.MustRegister(rec.Collectors()...)
	return &Setup{Manager: mgr, Recorder: recorder, Metrics: rec, Shard: s}, nil
}

// Named gives a binary its one name (fieldowner's names) and returns cfg
// with it: every write through the manager built from o carries it as its
// field manager, and any client built from cfg names it as its user agent,
// from which kube-apiserver takes the field manager of a write that names
// none.
func Named(cfg *rest.Config, o *ctrl.Options, controllerName string) *rest.Config {
	cfg.UserAgent = controllerName
	o.Client.FieldOwner = controllerName
	return cfg
}

// NewScheme returns a scheme with client-go's kinds and those the adders
// register.
func NewScheme(adders ...func(*runtime.Scheme) error) *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	for _, add := range adders {
		utilruntime.Must(add(scheme))
	}
	return scheme
}

// Exit logs err with msg and ends the binary with status 1, printing the
// message to stderr too so that it is seen whatever the log format.
func Exit(controllerName string, err error, msg string) {
	ctrl.Log.WithName(controllerName).Error(err, msg)
	fmt.Fprintln(os.Stderr, controllerName+":", msg+":", strings.TrimSpace(err.Error()))
	os.Exit(1)
}
