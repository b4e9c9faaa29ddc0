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

package enrollment

import (
	"context"
	"fmt"
	"time"

	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/ca"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/intern"
	"github.com/credo-dev/credo/internal/manager"
	"github.com/credo-dev/credo/internal/shard"
)

// ControllerName is the enrollment-controller's one name
// (fieldowner.EnrollmentController): its field manager, user agent,
// events' reporting controller and leader election lease.
const ControllerName = fieldowner.EnrollmentController

// Options configure the enrollment-controller's reconcilers.
type Options struct {
	// Concurrent is the number of concurrent reconciles per kind.
	Concurrent int
	// PendingTimeout is how long a Workload registered by enrollment step 1
	// waits for its certificate request before it is deleted.
	PendingTimeout time.Duration
	// PendingMarkDelay is how long such a Workload waits before it is
	// marked Pending; DefaultPendingMarkDelay when zero. Not a flag.
	PendingMarkDelay time.Duration
	// DenialsPolicySettle is how much older than a Workload the admission
	// policy credo-workload-denials must be for the Workload's
	// spec.denied.by to be established; DefaultDenialsPolicySettle when
	// zero. Not a flag.
	DenialsPolicySettle time.Duration
	// Limits are the platform's maxima, shared with the enrollment server
	// (its --max-* flags): a policy over one is Stalled.
	Limits enrollment.Limits
}

// BindFlags binds the options to fs with their defaults; Limits are bound
// by the enrollment server's options.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.PendingTimeout, "pending-workload-timeout", DefaultPendingTimeout,
		"How long a Workload registered by enrollment step 1 waits for its certificate request before it is deleted.")
	fs.IntVar(&o.Concurrent, "concurrent", 4, "The number of concurrent reconciles per kind.")
}

// NewScheme returns the kinds the enrollment-controller reads and writes:
// TrustAnchors for the embedded CA's (NewEmbeddedCA), never cached.
func NewScheme() *runtime.Scheme {
	return manager.NewScheme(enrollv1.AddToScheme, trustv1.AddToScheme)
}

// ConfigureCache sets the enrollment-controller's cache options: the cache
// holds every policy, token and workload whatever the shard, since the
// enrollment listener, on every replica, answers for all of them. Only the
// reconcilers are sharded.
func ConfigureCache(o *ctrl.Options, _ shard.Shard) {
	o.Cache = cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	intern.Cache(&o.Cache)
}

// Setup registers the field indexes (the reconcilers' and the enrollment
// server's) and the EnrollmentPolicy and Workload reconcilers with the
// manager: cmd/enrollment-controller and the tests build them here alike.
func Setup(ctx context.Context, s *manager.Setup, o Options) error {
	mgr := s.Manager
	if err := IndexEnrollmentFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := enrollment.IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	rOpts := EnrollmentReconcilerOptions{MaxConcurrentReconciles: o.Concurrent, Shard: s.Shard}
	policies := &EnrollmentPolicyReconciler{
		Client: mgr.GetClient(), EventRecorder: s.Recorder, Metrics: fluxcontroller.NewMetrics(mgr, s.Metrics),
		Limits: o.Limits,
	}
	if err := policies.SetupWithManager(mgr, rOpts); err != nil {
		return fmt.Errorf("setting up the EnrollmentPolicy controller: %w", err)
	}
	workloads := &WorkloadReconciler{
		Client: mgr.GetClient(), EventRecorder: s.Recorder, Metrics: fluxcontroller.NewMetrics(mgr, s.Metrics),
		PendingTimeout: o.PendingTimeout, PendingMarkDelay: o.PendingMarkDelay,
		APIReader: mgr.GetAPIReader(), DenialsPolicySettle: o.DenialsPolicySettle,
	}
	if err := workloads.SetupWithManager(mgr, rOpts); err != nil {
		return fmt.Errorf("setting up the Workload controller: %w", err)
	}
	return nil
}

// NewServer builds the enrollment server on the manager Setup registered
// the reconcilers on, so that it answers agents while the Workload
// reconciler writes the same Workloads: cmd/enrollment-controller and the
// tests of the shipped wiring build it here alike.
func NewServer(s *manager.Setup, authority ca.CertificateAuthority, opts enrollment.Options) (*enrollment.Server, error) {
	return enrollment.New(s.Manager, authority, s.Recorder, opts)
}
