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
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxreconcile "github.com/fluxcd/pkg/runtime/reconcile"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Object is a credo kind with Flux conditions.
type Object interface {
	client.Object
	conditions.Setter
}

// intervaled is a kind reconciled at an interval of its own.
type intervaled interface {
	GetRequeueAfter() time.Duration
}

// eventMetadata is a kind whose events carry metadata of its own.
type eventMetadata interface {
	EventMetadata() map[string]string
}

// Summary says how an object's Ready condition is derived and its status
// patched. Steps set the negative-polarity conditions; nothing sets Ready
// but Finish.
type Summary struct {
	// FieldOwner is the field manager of the status patch.
	FieldOwner string
	// ReadyMessage is Ready's message on success.
	ReadyMessage string
	// Message, when set, returns Ready's message on success instead of
	// ReadyMessage: a count the reconcile just made.
	Message func(obj Object) string
	// NegativePolarity are the step conditions Ready is derived from, in
	// order of precedence. Steps set these; no step sets Ready.
	NegativePolarity []string
	// Informational are conditions the reconciler owns that do not affect Ready.
	Informational []string
	// Interval is how often a kind with no interval of its own (no
	// GetRequeueAfter) is reconciled again after a success. When zero, a
	// success requeues only at the RequeueAfter the chain returns.
	Interval time.Duration
	// NoProgress is set for a kind with no Reconciling condition, whose
	// status is a count made whole on every reconcile (a rule). Such a kind
	// never waits.
	NoProgress bool
	// NotReady, when set, returns the reason and message of a state in
	// which a reconcile that ended without error leaves the object not
	// Ready (a suspended rule, a revoked policy, a source that refused some
	// releases), or an empty reason. Ready is False with them; the object
	// is reconciled, so its observedGeneration is set.
	NotReady func(obj Object) (reason, message string)
	// Notify, when set, records an event on each change of Ready's status
	// or reason: a failure with the type its error's policy asks for, a
	// NotReady state and a recovery as Normal. An object's first Ready is
	// no event.
	Notify *Events
}

// interval is the requeue interval of a successful reconcile of obj.
func (s Summary) interval(obj Object) time.Duration {
	if o, ok := obj.(intervaled); ok {
		return o.GetRequeueAfter()
	}
	return s.Interval
}

// readyMessage is Ready's message on success.
func (s Summary) readyMessage(obj Object) string {
	if s.Message != nil {
		return s.Message(obj)
	}
	return s.ReadyMessage
}

// conditions returns the negative-polarity conditions Ready is summarized
// from and the conditions the status patch owns.
func (s Summary) conditions() (negative, owned []string) {
	negative = append(append([]string{}, s.NegativePolarity...), meta.StalledCondition)
	if !s.NoProgress {
		negative = append(negative, meta.ReconcilingCondition)
	}
	owned = append(append([]string{meta.ReadyCondition}, negative...), s.Informational...)
	return negative, owned
}

// result turns the outcome of a reconcile chain into a controller result:
// a Stalling error marks the object Stalled and is not retried; a Waiting
// error waits (on the watch, or RequeueAfter); another error is returned for
// a retry with backoff; success requeues at the chain's RequeueAfter, or at
// the interval when it returns none.
func result(obj Object, interval time.Duration, res ctrl.Result, err error) (ctrl.Result, error) {
	var stalling *Stalling
	var waiting *Waiting
	if !errors.As(err, &stalling) {
		conditions.Delete(obj, meta.StalledCondition)
	}
	switch {
	case err == nil:
		if res.RequeueAfter == 0 {
			res.RequeueAfter = interval
		}
		return res, nil
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

// Finish is the deferred end of every reconcile but a lifecycle kind's (see
// FinishState). It turns the chain's result and error into a controller
// result (a Stalling error stalls, a Waiting error waits, another is
// retried, a success requeues at the interval), summarizes Ready from the
// negative-polarity conditions with fluxcd/pkg/runtime's ResultFinalizer
// (kstatus Reconciling/Stalled, lastHandledReconcileAt), applies a NotReady
// state, logs the error as its policy asks, and patches the status in one
// request (Patcher), setting observedGeneration once the object is Ready,
// Stalled or NotReady. With
// Notify, a change of Ready is an event once patched.
func Finish(ctx context.Context, patcher *Patcher, obj Object, s Summary, res ctrl.Result, recErr error) (ctrl.Result, error) {
	cause := recErr
	interval := s.interval(obj)
	res, recErr = result(obj, interval, res, recErr)
	negative, owned := s.conditions()
	isSuccess := func(r ctrl.Result, err error) bool {
		return err == nil && (interval == 0 || r.RequeueAfter == interval)
	}
	finalizer := fluxreconcile.NewResultFinalizer(isSuccess, s.readyMessage(obj), fluxreconcile.Conditions{
		Target:           meta.ReadyCondition,
		Owned:            owned,
		Summarize:        negative,
		NegativePolarity: negative,
	})
	// Ready is derived only from the negative-polarity conditions; with none
	// of them left, a Ready from an earlier failure must not survive.
	prevReady := conditions.Get(obj, meta.ReadyCondition)
	if !anyTrue(obj, append(append([]string{}, s.NegativePolarity...), meta.StalledCondition)) {
		conditions.Delete(obj, meta.ReadyCondition)
	}
	recErr = finalizer.Finalize(obj, res, recErr)
	notReady := false
	if s.NotReady != nil && recErr == nil && !conditions.IsStalled(obj) && !conditions.IsReconciling(obj) {
		if reason, msg := s.NotReady(obj); reason != "" {
			conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", msg)
			notReady = true
		}
	}
	keepReadyTransition(obj, prevReady)
	logPolicy(ctx, cause)
	// observedGeneration is set once the object is Ready, Stalled or
	// NotReady, as fluxcd/pkg/runtime's AddPatchOptions does for the first two.
	observed := conditions.IsStalled(obj) || conditions.IsReady(obj) || notReady
	if err := patcher.Patch(ctx, obj, s.FieldOwner, observed); err != nil {
		if !obj.GetDeletionTimestamp().IsZero() {
			err = client.IgnoreNotFound(err)
		}
		return res, errors.Join(recErr, err)
	}
	s.notify(obj, prevReady, notReady, cause)
	return res, recErr
}

// notify records the event of a change of Ready's status or reason.
func (s Summary) notify(obj Object, was *metav1.Condition, notReady bool, cause error) {
	c := conditions.Get(obj, meta.ReadyCondition)
	if s.Notify == nil || c == nil || (was != nil && was.Status == c.Status && was.Reason == c.Reason) {
		return
	}
	eventType := corev1.EventTypeNormal
	switch {
	case c.Status == metav1.ConditionTrue && was == nil:
		return
	case c.Status == metav1.ConditionTrue, notReady:
	default:
		eventType = PolicyOf(cause).Event
	}
	var md map[string]string
	if o, ok := obj.(eventMetadata); ok {
		md = o.EventMetadata()
	}
	s.Notify.Record(obj, md, eventType, c.Reason, c.Message)
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
