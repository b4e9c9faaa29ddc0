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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/patch"
	fluxreconcile "github.com/fluxcd/pkg/runtime/reconcile"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/reconciler"
)

// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies/status,verbs=get;patch
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=jointokens,verbs=get;list;watch

// EnrollmentFieldOwner is the field manager of the enrollment controllers' writes.
const EnrollmentFieldOwner = "credo-enrollment-controller"

// eventActionEnrollment is the action of every enrollment controller event.
const eventActionEnrollment = "Enrollment"

// enrollmentPolicyOwned are the conditions the policy reconciler writes.
var enrollmentPolicyOwned = []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}

// EnrollmentPolicyReconciler reports, for each EnrollmentPolicy, how many of
// its join tokens can still enroll and how many Workloads it holds, and
// whether it is revoked, its durations are invalid or over the platform's
// maxima. It changes nothing but
// the policy's status: the enrollment server enforces the policy.
type EnrollmentPolicyReconciler struct {
	client.Client
	EventRecorder events.Recorder
	fluxcontroller.Metrics

	// Limits are the platform's maxima (the enrollment-controller's
	// --max-* flags, shared with the enrollment server): a policy over one
	// is Stalled.
	Limits enrollment.Limits

	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

func (r *EnrollmentPolicyReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile reconciles one EnrollmentPolicy. It is requeued when its next
// join token expires, so that the token count drops on time.
func (r *EnrollmentPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	policy := &enrollv1.EnrollmentPolicy{}
	timer := reconciler.StartTimer(r.Metrics, req)
	defer func() { timer.Done(ctx, policy) }()
	if err := r.Get(ctx, req.NamespacedName, policy); err != nil {
		timer.Gone = apierrors.IsNotFound(err)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !policy.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var was *readyState
	if c := conditions.Get(policy, meta.ReadyCondition); c != nil {
		was = &readyState{status: string(c.Status), reason: c.Reason}
	}
	patcher := patch.NewSerialPatcher(policy, r.Client)
	defer func() {
		result, retErr = r.finish(ctx, patcher, policy, was, result, retErr)
	}()
	if policy.Generation != policy.Status.ObservedGeneration {
		conditions.MarkReconciling(policy, meta.ProgressingReason, "reconciling generation %d", policy.Generation)
	}
	return r.reconcilePolicy(ctx, policy)
}

// reconcilePolicy counts the policy's tokens and workloads and sets Ready.
// Counts are kept current even while the policy is revoked or stalled.
func (r *EnrollmentPolicyReconciler) reconcilePolicy(ctx context.Context, policy *enrollv1.EnrollmentPolicy) (ctrl.Result, error) {
	now := r.now()
	nextExpiry, err := r.count(ctx, policy, now)
	if err != nil {
		return ctrl.Result{}, &reconciler.Generic{Reason: meta.FailedReason, Err: err}
	}
	if err := validateDurations(policy); err != nil {
		return ctrl.Result{}, err
	}
	if problems := r.Limits.PolicyProblems(policy); len(problems) > 0 {
		return ctrl.Result{}, reconciler.NewStalling(enrollv1.ExceedsPlatformLimitReason,
			"nothing is signed under this policy until it is lowered: %s", strings.Join(problems, "; "))
	}
	var res ctrl.Result
	if !nextExpiry.IsZero() {
		res.RequeueAfter = nextExpiry.Sub(now)
	}
	if policy.Spec.Revoked {
		conditions.MarkFalse(policy, meta.ReadyCondition, enrollv1.PolicyRevokedReason,
			"policy is revoked: its %d token(s) enroll nothing and its %d workload(s) renew nothing",
			policy.Status.Tokens, policy.Status.Enrollments)
		return res, nil
	}
	conditions.MarkTrue(policy, meta.ReadyCondition, meta.SucceededReason,
		"%d token(s) can enroll; %d workload(s)", policy.Status.Tokens, policy.Status.Enrollments)
	return res, nil
}

// count sets status.tokens (the policy's join tokens neither revoked nor
// expired) and status.enrollments (its Workloads), and returns when the
// first counted token expires (zero when none is counted).
func (r *EnrollmentPolicyReconciler) count(ctx context.Context, policy *enrollv1.EnrollmentPolicy, now time.Time) (time.Time, error) {
	of := []client.ListOption{
		client.InNamespace(policy.Namespace),
		client.MatchingFields{policyIndex: policy.Name},
		// The lists are only read, never kept or changed.
		client.UnsafeDisableDeepCopy,
	}
	var tokens enrollv1.JoinTokenList
	if err := r.List(ctx, &tokens, of...); err != nil {
		return time.Time{}, fmt.Errorf("listing join tokens: %w", err)
	}
	var usable int32
	var next time.Time
	for i := range tokens.Items {
		t := &tokens.Items[i]
		// A token is counted as the enrollment server judges it.
		if !t.UsableAt(now, r.Limits.MaxTokenLifetime) {
			continue
		}
		expires := t.EnrollsUntil(r.Limits.MaxTokenLifetime)
		usable++
		if next.IsZero() || expires.Before(next) {
			next = expires
		}
	}
	var workloads enrollv1.WorkloadList
	if err := r.List(ctx, &workloads, of...); err != nil {
		return time.Time{}, fmt.Errorf("listing workloads: %w", err)
	}
	var enrolled int32
	for i := range workloads.Items {
		if workloads.Items[i].DeletionTimestamp.IsZero() {
			enrolled++
		}
	}
	policy.Status.Tokens, policy.Status.Enrollments = usable, enrolled
	return next, nil
}

// validateDurations refuses durations the enrollment cannot honour. The
// API's getters would silently replace some of them (a zero TTL by the
// default, a long grace by the maximum); the policy says so instead.
func validateDurations(policy *enrollv1.EnrollmentPolicy) error {
	var problems []string
	if d := policy.Spec.CertificateTTL; d != nil && d.Duration < enrollv1.MinCertificateTTL {
		problems = append(problems, fmt.Sprintf("spec.certificateTTL %s is under the minimum of %s", d.Duration, enrollv1.MinCertificateTTL))
	}
	if d := policy.Spec.RenewalGrace; d != nil && d.Duration > enrollv1.MaxRenewalGrace {
		problems = append(problems, fmt.Sprintf("spec.renewalGrace %s is over the maximum of %s", d.Duration, enrollv1.MaxRenewalGrace))
	}
	if d := policy.Spec.TokenLifetime; d != nil && d.Duration <= 0 {
		problems = append(problems, fmt.Sprintf("spec.tokenLifetime %s is not positive", d.Duration))
	}
	if len(problems) == 0 {
		return nil
	}
	return reconciler.NewStalling(enrollv1.InvalidDurationReason, "%s", strings.Join(problems, "; "))
}

// readyState is the part of a Ready condition whose change is an event.
type readyState struct{ status, reason string }

// finish ends a policy reconciler. A policy has no interval: it is requeued
// at its next token expiry, so any error-free result is a success, and
// fluxcd/pkg/runtime's result finalizer is used with that notion of
// success (internal/reconciler.Finish assumes an interval). A Stalling error
// marks Stalled and Ready False; another error marks Ready False and is
// retried. observedGeneration is set whenever the reconcile completed,
// Ready or not: a revoked policy is reconciled, not failing.
func (r *EnrollmentPolicyReconciler) finish(ctx context.Context, patcher *patch.SerialPatcher, policy *enrollv1.EnrollmentPolicy,
	was *readyState, res ctrl.Result, recErr error) (ctrl.Result, error) {
	var stalling *reconciler.Stalling
	if errors.As(recErr, &stalling) {
		conditions.MarkStalled(policy, stalling.Reason, "%s", stalling.Error())
		conditions.MarkFalse(policy, meta.ReadyCondition, stalling.Reason, "%s", stalling.Error())
		res, recErr = ctrl.Result{}, nil
	} else {
		conditions.Delete(policy, meta.StalledCondition)
	}
	var generic *reconciler.Generic
	if errors.As(recErr, &generic) {
		conditions.MarkFalse(policy, meta.ReadyCondition, generic.Reason, "%s", generic.Error())
	}
	finalizer := fluxreconcile.NewResultFinalizer(func(_ ctrl.Result, err error) bool { return err == nil }, "")
	recErr = finalizer.Finalize(policy, res, recErr)
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: enrollmentPolicyOwned}, patch.WithFieldOwner(EnrollmentFieldOwner)}
	if recErr == nil {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	if err := patcher.Patch(ctx, policy, opts...); err != nil {
		return res, errors.Join(recErr, fmt.Errorf("patching status: %w", err))
	}
	r.notify(policy, was)
	return res, recErr
}

// notify emits an event when Ready changes status or reason: Warning for a
// failure, Normal for a revocation and for a recovery. A policy's first
// Ready=True and a mere change of its counts are not events.
func (r *EnrollmentPolicyReconciler) notify(policy *enrollv1.EnrollmentPolicy, was *readyState) {
	c := conditions.Get(policy, meta.ReadyCondition)
	if c == nil || (was != nil && was.status == string(c.Status) && was.reason == c.Reason) {
		return
	}
	eventType := corev1.EventTypeNormal
	switch {
	case c.Status == metav1.ConditionTrue && was == nil:
		return
	case c.Status != metav1.ConditionTrue && c.Reason != enrollv1.PolicyRevokedReason:
		eventType = corev1.EventTypeWarning
	}
	r.EventRecorder.AnnotatedEventf(policy, nil, policy.EventMetadata(), eventType, c.Reason, eventActionEnrollment, "%s", c.Message)
}
