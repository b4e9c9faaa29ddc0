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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// tokenReady is the Ready condition of token t of policy at now, judged as
// the enrollment server judges it (JoinToken.UsableAt).
func tokenReady(policy *enrollv1.EnrollmentPolicy, t *enrollv1.JoinToken, now time.Time, maxLifetime time.Duration) metav1.Condition {
	until := t.EnrollsUntil(maxLifetime).UTC().Format(time.RFC3339)
	c := metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse}
	switch {
	case t.Spec.Revoked:
		c.Reason, c.Message = enrollv1.TokenRevokedReason, "revoked: it enrolls nothing further; workloads it enrolled keep renewing"
	case !t.UsableAt(now, maxLifetime):
		c.Reason, c.Message = enrollv1.TokenExpiredReason, "expired at "+until+": it enrolls nothing further"
	case policy.Spec.Revoked:
		c.Reason, c.Message = enrollv1.TokenPolicyRevokedReason, fmt.Sprintf("EnrollmentPolicy %s is revoked: nothing enrolls under it", policy.Name)
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, enrollv1.TokenUsableReason, "enrolls until "+until
	}
	return c
}

// markTokens writes the Ready condition of each of tokens (the policy's,
// read without a deep copy) whose condition differs, with an update
// conditional on the version read, retried on conflict: the enrollment
// server updates a token's use count concurrently.
func (r *EnrollmentPolicyReconciler) markTokens(ctx context.Context, policy *enrollv1.EnrollmentPolicy, tokens []enrollv1.JoinToken, now time.Time) error {
	for i := range tokens {
		want := tokenReady(policy, &tokens[i], now, r.Limits.MaxTokenLifetime)
		if !readyDiffers(tokens[i].Status.Conditions, want) || !tokens[i].DeletionTimestamp.IsZero() {
			continue
		}
		err := reconciler.UpdateStatus(ctx, r.Client, r.Client, retry.DefaultRetry, tokens[i].DeepCopy(), func(cur *enrollv1.JoinToken) (bool, error) {
			want := tokenReady(policy, cur, now, r.Limits.MaxTokenLifetime)
			if !readyDiffers(cur.Status.Conditions, want) {
				return false, nil
			}
			want.ObservedGeneration = cur.Generation
			apimeta.SetStatusCondition(&cur.Status.Conditions, want)
			return true, nil
		})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("writing the Ready condition of JoinToken %s: %w", tokens[i].Name, err)
		}
	}
	return nil
}

// readyDiffers reports whether conds' Ready differs from want in status,
// reason or message.
func readyDiffers(conds []metav1.Condition, want metav1.Condition) bool {
	c := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	return c == nil || c.Status != want.Status || c.Reason != want.Reason || c.Message != want.Message
}
