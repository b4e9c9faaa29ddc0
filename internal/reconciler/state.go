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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StateConflictRetry is how soon a lifecycle status write that lost a race
// is tried again, once the cache has seen the winner.
const StateConflictRetry = time.Second

// MarkState sets the Ready condition of a lifecycle kind, whose readiness is
// a state of its lifecycle rather than a summary of step conditions, and
// reports whether it changed. A Workload is the one such kind: the
// enrollment server marks it Pending, Enrolled or Renewed as it serves it,
// its reconciler Expired or PolicyNotFound (through FinishState) and back.
// Both writers set Ready only through MarkState. lastTransitionTime changes
// with the status only, as apimeta.SetStatusCondition keeps it.
func MarkState(obj conditions.Setter, status metav1.ConditionStatus, reason, message string) bool {
	return MarkCondition(obj, meta.ReadyCondition, status, reason, message)
}

// MarkCondition sets the condition of type t as MarkState sets Ready: at the
// object's generation, lastTransitionTime changing with the status only.
func MarkCondition(obj conditions.Setter, t string, status metav1.ConditionStatus, reason, message string) bool {
	conds := obj.GetConditions()
	changed := apimeta.SetStatusCondition(&conds, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
	return changed
}

// FinishState is the end of a lifecycle kind's reconcile, the documented
// variant of Finish for the kinds the enrollment server also writes. A
// Stalling or Waiting error marks Ready False with its reason and message
// (no Stalled or Reconciling condition: Ready is the whole status); another
// error is returned. The status is patched only when Ready changed, and
// conditionally on the version before (read by the chain's caller), so
// that a write of the other writer made meanwhile is never overwritten: a
// lost race requeues after StateConflictRetry and the next reconcile judges
// the newer status; an object gone meanwhile ends the reconcile. Once
// patched, a failure is logged and recorded as its policy asks, through
// s.Notify.
func FinishState(ctx context.Context, c client.Client, before, obj Object, s Summary, res ctrl.Result, err error) (ctrl.Result, error) {
	cause := err
	var stalling *Stalling
	var waiting *Waiting
	switch {
	case errors.As(err, &stalling):
		MarkState(obj, metav1.ConditionFalse, stalling.Reason, stalling.Error())
		res = ctrl.Result{}
	case errors.As(err, &waiting):
		MarkState(obj, metav1.ConditionFalse, waiting.Reason, waiting.Error())
		res = ctrl.Result{RequeueAfter: waiting.RequeueAfter}
	case err != nil:
		return res, err
	}
	if sameReady(before, obj) {
		return res, nil
	}
	perr := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(s.FieldOwner))
	switch {
	case apierrors.IsNotFound(perr):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(perr):
		return ctrl.Result{RequeueAfter: StateConflictRetry}, nil
	case perr != nil:
		return ctrl.Result{}, fmt.Errorf("patching status: %w", perr)
	}
	if cause != nil {
		logPolicy(ctx, cause)
		if s.Notify != nil {
			var md map[string]string
			if o, ok := obj.(eventMetadata); ok {
				md = o.EventMetadata()
			}
			s.Notify.Record(obj, md, PolicyOf(cause).Event, ReasonOf(cause), cause.Error())
		}
	}
	return res, nil
}

// sameReady reports whether a and b have the same Ready status, reason and
// message.
func sameReady(a, b conditions.Getter) bool {
	ca, cb := conditions.Get(a, meta.ReadyCondition), conditions.Get(b, meta.ReadyCondition)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message
}
