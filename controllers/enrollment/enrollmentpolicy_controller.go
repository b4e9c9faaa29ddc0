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
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/internal/reconciler"
)

// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies/status,verbs=get;patch
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=jointokens,verbs=get;list;watch

// tokenReadyRetry is how soon a policy is reconciled again when the Ready
// condition of one of its join tokens could not be written.
const tokenReadyRetry = 5 * time.Second

// EnrollmentFieldOwner is the field manager of the enrollment controllers' writes.
const EnrollmentFieldOwner = ControllerName

// eventActionEnrollment is the action of every enrollment controller event.
const eventActionEnrollment = "Enrollment"

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
func (r *EnrollmentPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	policy := &enrollv1.EnrollmentPolicy{}
	return reconciler.Run(ctx, req, policy, reconciler.Steps[*enrollv1.EnrollmentPolicy]{
		Client:    r.Client,
		Metrics:   r.Metrics,
		Summary:   r.summary(policy),
		Observed:  func(p *enrollv1.EnrollmentPolicy) int64 { return p.Status.ObservedGeneration },
		Reconcile: r.reconcilePolicy,
	})
}

// summary derives the Ready of policy: True with its counts. A policy has no
// interval: any error-free result is a success. A change of Ready is an
// event: Warning for a failure, Normal for a revocation and a recovery; a
// policy's first Ready=True and a mere change of its counts are not.
func (r *EnrollmentPolicyReconciler) summary(policy *enrollv1.EnrollmentPolicy) reconciler.Summary {
	return reconciler.Summary{
		FieldOwner: EnrollmentFieldOwner,
		Message: func(reconciler.Object) string {
			return fmt.Sprintf("%d token(s) can enroll; %d workload(s)", policy.Status.Tokens, policy.Status.Enrollments)
		},
		Notify: &reconciler.Events{Recorder: r.EventRecorder, Action: eventActionEnrollment},
	}
}

// reconcilePolicy counts the policy's tokens and workloads and checks its
// durations. Counts are kept current even while the policy is revoked or
// stalled.
func (r *EnrollmentPolicyReconciler) reconcilePolicy(ctx context.Context, policy *enrollv1.EnrollmentPolicy) (ctrl.Result, error) {
	now := r.now()
	nextExpiry, err := r.count(ctx, policy, now)
	if err != nil {
		return ctrl.Result{}, reconciler.NewGeneric(meta.FailedReason, err)
	}
	if policy.Spec.Revoked {
		// Terminal until the spec changes: Stalled, so that kstatus (and a
		// Flux health check) calls it Failed instead of InProgress forever.
		// An operator's decision, not a fault: a Normal event.
		stalled := reconciler.NewStalling(enrollv1.PolicyRevokedReason,
			"policy is revoked: its %d token(s) enroll nothing and its %d workload(s) renew nothing",
			policy.Status.Tokens, policy.Status.Enrollments)
		stalled.Config = reconciler.Config{Event: corev1.EventTypeNormal}
		return ctrl.Result{}, stalled
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
	return res, nil
}

// count sets status.tokens (the policy's join tokens neither revoked nor
// expired) and status.enrollments (its Workloads), marks each token Ready or
// not (markTokens), and returns when the policy must be counted again: when
// the first counted token expires, or sooner when a token's Ready could not
// be written (zero when neither).
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
	var next time.Time
	if err := r.markTokens(ctx, policy, tokens.Items, now); err != nil {
		// A token's Ready only reports: it never fails the policy, and is
		// written again shortly.
		ctrl.LoggerFrom(ctx).Info("could not write the Ready condition of a join token; retrying", "error", err.Error())
		next = now.Add(tokenReadyRetry)
	}
	var usable int32
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
