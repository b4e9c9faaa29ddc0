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

package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/object"
	"github.com/fluxcd/pkg/runtime/patch"
	fluxreconcile "github.com/fluxcd/pkg/runtime/reconcile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a credo kind with Flux conditions and an interval.
type Object interface {
	client.Object
	conditions.Setter
	GetRequeueAfter() time.Duration
}

// Summary says how an object's Ready condition is derived.
type Summary struct {
	// FieldOwner is the field manager of the status patch.
	FieldOwner string
	// ReadyMessage is Ready's message on success.
	ReadyMessage string
	// NegativePolarity are the step conditions Ready is derived from, in
	// order of precedence. Steps set these; no step sets Ready.
	NegativePolarity []string
	// Informational are conditions the reconciler owns that do not affect Ready.
	Informational []string
}

// Result turns the outcome of a reconcile chain into a controller result:
// a Stalling error marks the object Stalled and is not retried; a Waiting
// error waits (on the watch, or RequeueAfter); another error is returned for
// a retry with backoff; success requeues at the object's interval.
func Result(obj Object, err error) (ctrl.Result, error) {
	var stalling *Stalling
	var waiting *Waiting
	if !errors.As(err, &stalling) {
		conditions.Delete(obj, meta.StalledCondition)
	}
	switch {
	case err == nil:
		return ctrl.Result{RequeueAfter: obj.GetRequeueAfter()}, nil
	case errors.As(err, &stalling):
		conditions.MarkStalled(obj, stalling.Reason, "%s", stalling.Error())
		return ctrl.Result{}, nil
	case errors.As(err, &waiting):
		conditions.MarkReconciling(obj, waiting.Reason, "%s", waiting.Error())
		return ctrl.Result{RequeueAfter: waiting.RequeueAfter}, nil
	default:
		return ctrl.Result{}, err
	}
}

// Finish is the deferred end of every reconcile: it summarizes Ready from
// the step conditions with fluxcd/pkg/runtime's ResultFinalizer (kstatus
// Reconciling/Stalled, lastHandledReconcileAt), then patches the status,
// setting observedGeneration once the object is Ready or Stalled.
func Finish(ctx context.Context, patcher *patch.SerialPatcher, obj Object, s Summary, res ctrl.Result, recErr error) (ctrl.Result, error) {
	owned := append([]string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}, s.NegativePolarity...)
	owned = append(owned, s.Informational...)
	isSuccess := func(r ctrl.Result, err error) bool {
		return err == nil && r.RequeueAfter == obj.GetRequeueAfter()
	}
	finalizer := fluxreconcile.NewResultFinalizer(isSuccess, s.ReadyMessage, fluxreconcile.Conditions{
		Target:           meta.ReadyCondition,
		Owned:            owned,
		Summarize:        append(append([]string{}, s.NegativePolarity...), meta.StalledCondition, meta.ReconcilingCondition),
		NegativePolarity: append(append([]string{}, s.NegativePolarity...), meta.StalledCondition, meta.ReconcilingCondition),
	})
	// Ready is derived only from the negative-polarity conditions; with none
	// of them left, a Ready from an earlier failure must not survive.
	prevReady := conditions.Get(obj, meta.ReadyCondition)
	if !anyTrue(obj, append(append([]string{}, s.NegativePolarity...), meta.StalledCondition)) {
		conditions.Delete(obj, meta.ReadyCondition)
	}
	recErr = finalizer.Finalize(obj, res, recErr)
	keepReadyTransition(obj, prevReady)
	opts := fluxreconcile.AddPatchOptions(obj, nil, owned, s.FieldOwner)
	if err := patcher.Patch(ctx, obj, opts...); err != nil {
		if !obj.GetDeletionTimestamp().IsZero() {
			err = client.IgnoreNotFound(err)
		}
		recErr = errors.Join(recErr, err)
	}
	return res, recErr
}

// keepReadyTransition gives a Ready that Finish deleted and the finalizer set
// again with the same status, reason and message its previous
// lastTransitionTime back, as conditions.Set would have kept it: else the
// new time makes the patch helper send a conditions patch and a status patch
// that change nothing, on every re-check.
func keepReadyTransition(obj conditions.Setter, prev *metav1.Condition) {
	if prev == nil {
		return
	}
	conds := obj.GetConditions()
	for i := range conds {
		c := &conds[i]
		if c.Type == prev.Type && c.Status == prev.Status && c.Reason == prev.Reason && c.Message == prev.Message {
			c.LastTransitionTime = prev.LastTransitionTime
			obj.SetConditions(conds)
			return
		}
	}
}

func anyTrue(obj conditions.Getter, types []string) bool {
	for _, t := range types {
		if conditions.IsTrue(obj, t) {
			return true
		}
	}
	return false
}

// PatchRuleStatus ends the reconcile of a rule kind (TrustSource,
// AccountSource), whose steps set Ready and Stalled themselves: it records
// the handled reconcile.fluxcd.io/requestedAt and patches the status with
// Ready and Stalled owned and observedGeneration set.
func PatchRuleStatus(ctx context.Context, patcher *patch.SerialPatcher, obj interface {
	client.Object
	conditions.Setter
}, fieldOwner string) error {
	if v, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		if err := object.SetStatusLastHandledReconcileAt(obj, v); err != nil {
			return fmt.Errorf("recording the handled reconcile request: %w", err)
		}
	}
	return patcher.Patch(ctx, obj,
		patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.StalledCondition}},
		patch.WithStatusObservedGeneration{}, patch.WithFieldOwner(fieldOwner))
}
