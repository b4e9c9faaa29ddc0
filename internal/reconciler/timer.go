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
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Timer records one Reconcile in Flux's
// gotk_reconcile_duration_seconds, as every Flux controller does in the
// deferred end of Reconcile: deferred first thing, it runs after the status
// patch, on every path (suspended, deleted, failed) once the object was read.
//
// Readiness and suspension are not recorded here: like Flux since 2.1, credo
// exposes them through kube-state-metrics (config/monitoring). Run times
// every reconcile so:
//
//	t := StartTimer(r.Metrics, req)
//	defer func() { t.Done(ctx, obj) }()
//	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
//		t.Gone = apierrors.IsNotFound(err)
//		...
type Timer struct {
	metrics fluxcontroller.Metrics
	key     types.NamespacedName
	start   time.Time
	// gone is set when the object was not found: its series is deleted.
	Gone bool
}

// StartTimer starts timing the reconcile of req.
func StartTimer(m fluxcontroller.Metrics, req ctrl.Request) *Timer {
	return &Timer{metrics: m, key: req.NamespacedName, start: time.Now()}
}

// Done records the duration for obj. An object that is gone has its series
// deleted, since most credo kinds carry no finalizer and are never seen
// deleted: a deleted object must not leave a series behind. An object
// being deleted with no finalizer of ours left has it deleted by Flux's
// Metrics itself. An object never read (an error before the read) records
// nothing.
func (t *Timer) Done(ctx context.Context, obj conditions.Getter) {
	m := t.metrics
	if m.MetricsRecorder == nil {
		return
	}
	switch {
	case t.Gone:
		gvk, err := apiutil.GVKForObject(obj, m.Scheme)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "unable to delete the duration metric of a deleted object")
			return
		}
		m.MetricsRecorder.DeleteDuration(corev1.ObjectReference{Kind: gvk.Kind, Namespace: t.key.Namespace, Name: t.key.Name})
	case obj.GetUID() != "":
		m.RecordDuration(ctx, obj, t.start)
	}
}
