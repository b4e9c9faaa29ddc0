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

package credentials

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/engine"
)

// reconcileApplied sets the Applied condition of acct from every consumer
// of its Secret s that credo observes: the HelmRelease hr when the account
// is delivered through valuesFrom, the CloudNativePG Clusters and
// mariadb-operator Users of the namespace that reference s. It requests a
// reconcile of hr when s changed since the last request. It never affects
// Ready, and so returns no error: a consumer it could not read, or a
// request it could not make, is Unknown ObserveFailed and logged, until
// the next event of the account, its Secret or a consumer. Without the
// Secret (s nil) nothing is observed. Before the release exists (hr nil,
// ReleasePending), a valuesFrom account's release is a consumer that reads
// nothing yet: Unknown, ReleasePending; the engines are observed as ever.
func (r *CredentialAccountReconciler) reconcileApplied(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, s *corev1.Secret) {
	if s == nil {
		// No account Secret in place: Ready says why; Applied is left as
		// it was until there is a Secret to observe.
		return
	}
	if acct.Status.Origin == credv1.OriginNotIssued {
		conditions.MarkUnknown(acct, credv1.AppliedCondition, credv1.NotIssuedReason,
			"no password has been issued for %s yet: nothing to apply", acct.Spec.Username)
		return
	}
	var states []consumerState
	var errs []error
	switch {
	case acct.Spec.ValuesFrom != nil && hr == nil:
		states = append(states, appliedUnknown(credv1.ReleasePendingReason,
			"HelmRelease %s does not exist yet; it reads the verifier through valuesFrom once it does", acct.Spec.Release))
	case acct.Spec.ValuesFrom != nil:
		st, err := r.releaseApplied(ctx, acct, hr, s)
		states, errs = append(states, st), append(errs, err)
	}
	found, err := r.enginesApplied(ctx, acct, s)
	states, errs = append(states, found...), append(errs, err)
	if err := errors.Join(errs...); err != nil {
		// A consumer not read may say anything: no verdict.
		ctrl.LoggerFrom(ctx).Error(err, "observing the consumers of the account Secret for the Applied condition")
		conditions.MarkUnknown(acct, credv1.AppliedCondition, credv1.ObserveFailedReason, "%s", err.Error())
		return
	}
	setApplied(acct, states, r.engines.absent)
}

// setApplied sets the Applied condition from the consumers' states: True
// when all are True, False when one is False, Unknown otherwise, or
// EngineNotObserved when there is none. The message names the change
// (status.lastChange) the condition reflects; appliedChange records it
// when True.
func setApplied(acct *credv1.CredentialAccount, states []consumerState, absent []engine.Kind) {
	change := "unknown"
	if acct.Status.LastChange != nil {
		change = acct.Status.LastChange.UTC().Format(time.RFC3339)
	}
	if len(states) == 0 {
		msg := fmt.Sprintf("nothing credo observes consumes Secret %s (no valuesFrom, no CloudNativePG Cluster or mariadb-operator User references it)", acct.SecretName())
		if len(absent) > 0 {
			names := make([]string, 0, len(absent))
			for _, k := range absent {
				names = append(names, k.Engine)
			}
			msg += fmt.Sprintf("; not observed: %s (CRD not installed when the credential-controller started)", strings.Join(names, ", "))
		}
		conditions.MarkUnknown(acct, credv1.AppliedCondition, credv1.EngineNotObservedReason, "%s", msg)
		return
	}
	pick := func(status metav1.ConditionStatus) (consumerState, bool) {
		for _, st := range states {
			if st.status == status {
				return st, true
			}
		}
		return consumerState{}, false
	}
	msgs := make([]string, 0, len(states))
	for _, st := range states {
		msgs = append(msgs, st.message)
	}
	msg := fmt.Sprintf("password changed at %s: %s", change, strings.Join(msgs, "; "))
	if st, ok := pick(metav1.ConditionFalse); ok {
		conditions.MarkFalse(acct, credv1.AppliedCondition, st.reason, "%s", msg)
		return
	}
	if st, ok := pick(metav1.ConditionUnknown); ok {
		conditions.MarkUnknown(acct, credv1.AppliedCondition, st.reason, "%s", msg)
		return
	}
	conditions.MarkTrue(acct, credv1.AppliedCondition, states[0].reason, "%s", msg)
	if acct.Status.LastChange != nil {
		at := *acct.Status.LastChange
		acct.Status.AppliedChange = &at
	}
}
