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

package trust

import (
	"context"
	"strings"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// secretEvents enqueues the releases a Secret's event may concern
// (requestsForSecret). The event of a projection as this reconciler last
// wrote it (its echo, projection.Writer.Echo) reconciles nothing more
// through the projection: the reconcile that wrote it recorded it. A
// projection changed or deleted by anyone else is no echo and reconciles
// its release, which writes it back.
//
// skip, when set, names the Secrets whose events another watch delivers
// (the labelled sources, whose cache's events reconcile them); an update
// is skipped only when both its versions are skipped.
func (r *TrustAnchorReconciler) secretEvents(skip func(client.Object) bool) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	add := func(q queue, reqs []reconcile.Request) {
		for _, req := range reqs {
			q.Add(req)
		}
	}
	skipped := func(objs ...client.Object) bool {
		if skip == nil {
			return false
		}
		for _, o := range objs {
			if !skip(o) {
				return false
			}
		}
		return true
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if skipped(e.Object) {
				return
			}
			add(q, r.requestsForSecret(ctx, e.Object, !r.writer().Echo(e.Object)))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if skipped(e.ObjectOld, e.ObjectNew) {
				return
			}
			// The old object's publish label: a removed label is seen too.
			add(q, r.labelRequests(e.ObjectOld))
			add(q, r.requestsForSecret(ctx, e.ObjectNew, !r.writer().Echo(e.ObjectNew)))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			r.echoes.Forget(e.Object)
			if skipped(e.Object) {
				return
			}
			add(q, r.requestsForSecret(ctx, e.Object, true))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) {
			add(q, r.requestsForSecret(ctx, e.Object, true))
		},
	}
}

// requestsForSecret maps a Secret to the releases it may concern: the
// release its publish label names, the release of a projection (unless
// projection is false), and the TrustAnchors whose source it is.
func (r *TrustAnchorReconciler) requestsForSecret(ctx context.Context, o client.Object, projection bool) []reconcile.Request {
	ns, name := o.GetNamespace(), o.GetName()
	reqs := r.labelRequests(o)
	if rel, ok := strings.CutSuffix(name, trustv1.ProjectionSuffix); ok && rel != "" && projection {
		reqs = append(reqs, reconciler.Request(ns, rel))
	}
	var tas trustv1.TrustAnchorList
	if err := r.List(ctx, &tas, client.InNamespace(ns), client.MatchingFields{sourceNameIndex: name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing TrustAnchors by source", "secret", name)
		return reqs
	}
	for _, ta := range tas.Items {
		reqs = append(reqs, reconciler.Request(ns, ta.Name))
	}
	return reqs
}

// labelled reports whether a Secret carries the publish label: the cache of
// label-leg sources holds it, and its events reconcile it.
func (r *TrustAnchorReconciler) labelled(o client.Object) bool {
	return r.Sources != nil && o.GetLabels()[r.Keys.PublishCACert] == "true"
}

// labelRequests is the release the Secret's publish label names.
func (r *TrustAnchorReconciler) labelRequests(o client.Object) []reconcile.Request {
	if l := o.GetLabels(); l[r.Keys.PublishCACert] == "true" && l[r.Keys.Release] != "" {
		return []reconcile.Request{reconciler.Request(o.GetNamespace(), l[r.Keys.Release])}
	}
	return nil
}
