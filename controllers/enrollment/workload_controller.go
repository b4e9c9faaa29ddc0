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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=workloads,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=workloads/status,verbs=get;patch

// DefaultPendingTimeout is how long a Workload may stay registered without a
// certificate (enrollment step 1 done, step 2 never came) before it is deleted.
const DefaultPendingTimeout = 10 * time.Minute

// DefaultPendingMarkDelay is how long a Workload may stay registered without
// a certificate before it is marked Ready False Pending: an agent asks for
// its certificate right after step 1, so most never are.
const DefaultPendingMarkDelay = 5 * time.Second

// WorkloadReconciler keeps the registry: it establishes an enrolled
// Workload's attributes (workload_attributes.go), deletes Workloads that never
// got their first certificate, and marks Ready False on a Workload that is
// denied (recording when it first saw the denial, and who denied it when the
// admission policy credo-workload-denials establishes it), whose copies must
// all enroll again after a duplicate identity, whose certificate expired beyond
// its policy's renewal grace (it must enroll again with a token) or whose
// policy is gone. It never deletes an enrolled
// Workload: deleting one is how an operator stops its renewals.
//
// The enrollment server owns the Workload's Ready condition once the
// workload is Enrolled or Renewed; this reconciler writes it only to say
// Pending (a registration left waiting), Denied, DuplicateIdentity, Expired
// or PolicyNotFound, and to undo Denied, Expired and PolicyNotFound when
// they no longer hold.
// Its writes are conditional on the version it read, so a renewal served
// meanwhile is never overwritten.
type WorkloadReconciler struct {
	client.Client
	EventRecorder events.Recorder
	fluxcontroller.Metrics

	// PendingTimeout is how long after its creation a Workload without a
	// certificate is deleted; DefaultPendingTimeout when zero.
	PendingTimeout time.Duration
	// PendingMarkDelay is how long after its creation a Workload without a
	// certificate is marked Pending; DefaultPendingMarkDelay when zero.
	PendingMarkDelay time.Duration
	// APIReader reads the admission policy credo-workload-denials and its
	// binding, uncached (the manager's APIReader): the enrollment-controller
	// may get those two objects and list nothing of admissionregistration.
	APIReader client.Reader
	// DenialsPolicySettle is how much older than a Workload that policy and
	// its binding must be for its spec.denied.by to be recorded as
	// established (status.deniedBy); DefaultDenialsPolicySettle when zero.
	DenialsPolicySettle time.Duration
	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

func (r *WorkloadReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *WorkloadReconciler) pendingMarkDelay() time.Duration {
	if r.PendingMarkDelay > 0 {
		return r.PendingMarkDelay
	}
	return DefaultPendingMarkDelay
}

func (r *WorkloadReconciler) denialsPolicySettle() time.Duration {
	if r.DenialsPolicySettle > 0 {
		return r.DenialsPolicySettle
	}
	return DefaultDenialsPolicySettle
}

func (r *WorkloadReconciler) pendingTimeout() time.Duration {
	if r.PendingTimeout > 0 {
		return r.PendingTimeout
	}
	return DefaultPendingTimeout
}

// Reconcile reconciles one Workload. It ends through
// reconciler.FinishState: the Workload's Ready is a lifecycle state the
// enrollment server writes too.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconciler.Run(ctx, req, &enrollv1.Workload{}, reconciler.Steps[*enrollv1.Workload]{
		Client:    r.Client,
		Metrics:   r.Metrics,
		Lifecycle: true,
		Summary: reconciler.Summary{
			FieldOwner: EnrollmentFieldOwner,
			Notify:     &reconciler.Events{Recorder: r.EventRecorder, Action: eventActionEnrollment},
		},
		Reconcile: r.reconcileWorkload,
	})
}

// reconcileWorkload collects a pending Workload, and judges an enrolled one
// against its policy's renewal grace: Expired (a Stalling error: it must
// enroll again) once the grace is over, PolicyNotFound (a Waiting error
// with a Warning: the policy's creation reconciles it) while its policy is
// gone, and back to Enrolled or Renewed when neither holds any more.
func (r *WorkloadReconciler) reconcileWorkload(ctx context.Context, wl *enrollv1.Workload) (ctrl.Result, error) {
	now := r.now()
	if wl.Status.Serial == "" || wl.Status.NotAfter == nil {
		// A registration denied before its certificate is refused by step
		// 2 and collected like any other.
		return r.collectPending(ctx, wl, now)
	}
	if err := r.establishAttributes(ctx, wl); err != nil {
		if apierrors.IsConflict(err) {
			// A renewal or a spec write came first: judged again on it.
			return ctrl.Result{RequeueAfter: reconciler.StateConflictRetry}, nil
		}
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("establishing attributes: %w", err)
		}
		return ctrl.Result{}, nil
	}
	if d := wl.Spec.Denied; d != nil {
		if wl.Status.DeniedAt == nil {
			at := metav1.NewTime(now)
			wl.Status.DeniedAt = &at
		}
		by, notEstablished, err := r.deniedBy(ctx, wl)
		if err != nil {
			return ctrl.Result{}, err
		}
		// Ready's message changes with it, so that FinishState writes it.
		wl.Status.DeniedBy = by
		return ctrl.Result{}, reconciler.NewStalling(enrollv1.DeniedReason, "%s", deniedMessage(wl, notEstablished))
	}
	wl.Status.DeniedAt, wl.Status.DeniedBy = nil, ""
	if wl.ForcedToReenroll() {
		// Written by the enrollment server with the duplicate's record.
		msg := conditions.GetMessage(wl, enrollv1.DuplicateIdentityCondition)
		return ctrl.Result{}, reconciler.NewStalling(enrollv1.DuplicateIdentityReason, "%s", msg)
	}
	policy := &enrollv1.EnrollmentPolicy{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: wl.Spec.Policy}, policy); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading EnrollmentPolicy %s: %w", wl.Spec.Policy, err)
		}
		// Kept as is: the policy's creation reconciles it again.
		return ctrl.Result{}, reconciler.NewWaiting(enrollv1.PolicyNotFoundReason,
			"EnrollmentPolicy %s not found; the workload renews nothing until it exists again", wl.Spec.Policy).Warn()
	}
	grace := policy.GetRenewalGrace()
	notAfter := wl.Status.NotAfter.Time
	deadline := policy.RenewalDeadline(notAfter)
	// The enrollment server refuses a renewal once now is after the deadline.
	if now.After(deadline) {
		return ctrl.Result{}, reconciler.NewStalling(enrollv1.ExpiredReason,
			"certificate %s expired at %s and the renewal grace of %s ended at %s; the workload must enroll again with a join token",
			wl.Status.Serial, formatTime(notAfter), grace, formatTime(deadline))
	}
	if reason := conditions.GetReason(wl, meta.ReadyCondition); reason == enrollv1.ExpiredReason ||
		reason == enrollv1.PolicyNotFoundReason || reason == enrollv1.DeniedReason {
		// The policy is back, its grace grew or the denial was lifted: the
		// certificate renews again.
		reason := enrollv1.EnrolledReason
		if wl.Status.Renewals > 0 {
			reason = enrollv1.RenewedReason
		}
		reconciler.MarkState(wl, metav1.ConditionTrue, reason, fmt.Sprintf("certificate %s valid until %s; renewable until %s",
			wl.Status.Serial, formatTime(notAfter), formatTime(deadline)))
	}
	// Requeued for the first instant after the deadline.
	return ctrl.Result{RequeueAfter: deadline.Sub(now) + time.Nanosecond}, nil
}

// collectPending marks a Workload that has had no certificate for
// PendingMarkDelay Pending, and deletes it once PendingTimeout passed since
// its creation; it requeues for whichever comes next. The enrollment server
// writes nothing between the two steps of an enrollment (step 2 follows at
// once), so only a registration left waiting is marked. The mark and the
// deletion are conditional on the version read: a certificate recorded
// meanwhile wins.
func (r *WorkloadReconciler) collectPending(ctx context.Context, wl *enrollv1.Workload, now time.Time) (ctrl.Result, error) {
	timeout := r.pendingTimeout()
	deadline := wl.CreationTimestamp.Add(timeout)
	if now.Before(deadline) {
		next := deadline
		if conditions.Get(wl, meta.ReadyCondition) == nil {
			if markAt := wl.CreationTimestamp.Add(r.pendingMarkDelay()); now.Before(markAt) {
				next = markAt
			} else {
				reconciler.MarkState(wl, metav1.ConditionFalse, enrollv1.PendingReason,
					"registered; waiting for the certificate request")
			}
		}
		return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
	}
	uid, rv := wl.UID, wl.ResourceVersion
	err := r.Delete(ctx, wl, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: reconciler.StateConflictRetry}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting pending workload: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted a workload that got no certificate", "timeout", timeout.String())
	r.EventRecorder.AnnotatedEventf(wl, nil, wl.EventMetadata(), corev1.EventTypeNormal, enrollv1.PendingTimeoutReason, eventActionEnrollment,
		"deleted: registered at %s with join token %s, no certificate requested within %s", formatTime(wl.CreationTimestamp.Time),
		wl.Spec.Token, timeout)
	return ctrl.Result{}, nil
}

// formatTime formats a time as the API shows it.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
