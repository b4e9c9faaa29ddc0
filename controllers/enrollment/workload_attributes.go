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
	"maps"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
)

// AttributesPolicy names the ValidatingAdmissionPolicy of config/admission,
// and its binding, that admit a change of a Workload's labels or hostname
// only from a holder of the relabel verb, in its own name
// (config/admission/workloads.yaml).
const AttributesPolicy = "credo-workload-attributes"

// maxAttributeHistory is how many changes status.attributeHistory keeps.
const maxAttributeHistory = 10

// attributes is a judgement of a Workload's spec.labels and spec.hostname
// against its policy: what becomes established, and why not all of it.
type attributes struct {
	labels   map[string]string
	hostname string
	// refused says why spec.labels are not established; "" when they are.
	refused string
	// withdrawn are established labels the policy no longer allows, dropped.
	withdrawn map[string]string
	// fromSpec: the established attributes change because the spec did
	// (not only because the policy withdrew a label).
	fromSpec bool
}

// judgeAttributes judges wl's spec attributes against policy. A workload
// whose attributes were never established (one enrolled before they could
// change) takes those of its spec that the policy allows. Otherwise the
// spec's labels are taken whole when the policy allows every one, and not
// at all when it does not (the established ones stay, less any the policy
// has stopped allowing); the hostname, which no policy bounds, is taken.
func judgeAttributes(wl *enrollv1.Workload, policy *enrollv1.EnrollmentPolicy) attributes {
	a := attributes{hostname: wl.Spec.Hostname}
	if err := enrollment.LabelsAllowed(policy, wl.Spec.Labels); err != nil {
		a.refused = err.Error()
	}
	if !attributesEstablished(wl) {
		a.labels = enrollment.AllowedLabels(policy, wl.Spec.Labels)
		return a
	}
	prev := wl.Status.Labels
	if a.refused == "" {
		a.labels = wl.Spec.Labels
	} else {
		a.labels = enrollment.AllowedLabels(policy, prev)
	}
	for k, v := range prev {
		if _, kept := a.labels[k]; !kept && enrollment.LabelsAllowed(policy, map[string]string{k: v}) != nil {
			if a.withdrawn == nil {
				a.withdrawn = map[string]string{}
			}
			a.withdrawn[k] = v
		}
	}
	a.fromSpec = (a.refused == "" && !maps.Equal(wl.Spec.Labels, prev)) || a.hostname != wl.Status.Hostname
	return a
}

// attributesEstablished reports whether the enrollment-controller has
// established wl's attributes before.
func attributesEstablished(wl *enrollv1.Workload) bool {
	return wl.Status.AttributesGeneration > 0
}

// establishAttributes records wl's established attributes in its status
// (status.labels, status.hostname, status.attributesGeneration), a change
// of them in status.attributeHistory with who made it as far as it is
// established, and AttributesRefused while spec.labels are not allowed by
// the policy. Its status write is conditional on the version read; it
// returns a Conflict error when that lost, and nothing is written while
// the policy is gone (PolicyNotFound says so).
func (r *WorkloadReconciler) establishAttributes(ctx context.Context, wl *enrollv1.Workload) error {
	policy := &enrollv1.EnrollmentPolicy{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: wl.Spec.Policy}, policy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading EnrollmentPolicy %s: %w", wl.Spec.Policy, err)
	}
	before := wl.DeepCopy()
	a := judgeAttributes(wl, policy)
	var change *enrollv1.WorkloadAttributeChange
	notEstablished := ""
	if attributesEstablished(wl) && (!maps.Equal(a.labels, wl.Status.Labels) || a.hostname != wl.Status.Hostname) {
		change = &enrollv1.WorkloadAttributeChange{At: metav1.NewTime(r.now()),
			PreviousLabels: wl.Status.Labels, PreviousHostname: wl.Status.Hostname}
		switch {
		case !a.fromSpec:
			change.By = "policy/" + policy.Name
		case wl.Spec.ChangedBy != "":
			var err error
			if notEstablished, err = r.admitted(ctx, AttributesPolicy, wl.CreationTimestamp.Time); err != nil {
				return err
			}
			if notEstablished == "" {
				change.By = wl.Spec.ChangedBy
			}
		}
		wl.Status.AttributeHistory = append([]enrollv1.WorkloadAttributeChange{*change}, wl.Status.AttributeHistory...)
		if len(wl.Status.AttributeHistory) > maxAttributeHistory {
			wl.Status.AttributeHistory = wl.Status.AttributeHistory[:maxAttributeHistory]
		}
	}
	wl.Status.Labels, wl.Status.Hostname, wl.Status.AttributesGeneration = a.labels, a.hostname, wl.Generation
	if a.refused != "" {
		conditions.MarkTrue(wl, enrollv1.AttributesRefusedCondition, enrollv1.LabelsNotAllowedReason,
			"spec.labels are not established: %s; the registry answers labels %s", a.refused, k8slabels.FormatLabels(a.labels))
	} else {
		conditions.Delete(wl, enrollv1.AttributesRefusedCondition)
	}
	if equality.Semantic.DeepEqual(before.Status, wl.Status) {
		return nil
	}
	if err := r.Status().Patch(ctx, wl, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(EnrollmentFieldOwner)); err != nil {
		return err
	}
	r.attributeEvents(wl, before, a, change, notEstablished)
	return nil
}

// attributeEvents says what establishAttributes changed: a refused relabel
// (once per message), withdrawn labels, and a change of the established
// attributes with who made it.
func (r *WorkloadReconciler) attributeEvents(wl, before *enrollv1.Workload, a attributes,
	change *enrollv1.WorkloadAttributeChange, notEstablished string) {
	emit := func(typ, reason, format string, args ...any) {
		r.EventRecorder.AnnotatedEventf(wl, nil, wl.EventMetadata(), typ, reason, eventActionEnrollment, format, args...)
	}
	if a.refused != "" && conditions.GetMessage(before, enrollv1.AttributesRefusedCondition) !=
		conditions.GetMessage(wl, enrollv1.AttributesRefusedCondition) {
		emit(corev1.EventTypeWarning, enrollv1.LabelsNotAllowedReason, "%s",
			conditions.GetMessage(wl, enrollv1.AttributesRefusedCondition))
	}
	if len(a.withdrawn) > 0 {
		emit(corev1.EventTypeWarning, enrollv1.LabelsWithdrawnReason,
			"labels %s dropped: enrollment policy %s no longer allows them", k8slabels.FormatLabels(a.withdrawn), wl.Spec.Policy)
	}
	if change == nil {
		return
	}
	by := change.By
	switch {
	case by == "" && wl.Spec.ChangedBy != "":
		by = fmt.Sprintf("unknown (spec.changedBy says %q, which is not established: %s)", wl.Spec.ChangedBy, notEstablished)
	case by == "":
		by = "unknown (spec.changedBy is empty)"
	}
	emit(corev1.EventTypeNormal, enrollv1.AttributesChangedReason, "labels %s (were %s), hostname %q (was %q), changed by %s",
		k8slabels.FormatLabels(wl.Status.Labels), k8slabels.FormatLabels(change.PreviousLabels), wl.Status.Hostname, change.PreviousHostname, by)
}
