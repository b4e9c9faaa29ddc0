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
	"reflect"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/engine"
)

// +kubebuilder:rbac:groups=postgresql.cnpg.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=k8s.mariadb.com,resources=users,verbs=get;list;watch

// watchApplied adds the watches the Applied condition needs: the status of
// HelmReleases, for their accounts delivered through valuesFrom, and the
// operator kinds whose CRDs the API server serves now, for the accounts
// whose Secret they reference. A kind installed later is observed after a
// restart of the controller; until then its consumers are not seen.
func (r *CredentialAccountReconciler) watchApplied(b *builder.Builder, mgr ctrl.Manager) *builder.Builder {
	log := mgr.GetLogger().WithName("applied")
	r.engines = appliedEngines{reader: mgr.GetCache()}
	b = b.Watches(&helmv2.HelmRelease{}, handler.EnqueueRequestsFromMapFunc(r.valuesAccountsOfRelease),
		builder.WithPredicates(releaseHandledPredicate()))
	for _, k := range engine.Kinds {
		if _, err := mgr.GetRESTMapper().RESTMapping(k.GVK.GroupKind(), k.GVK.Version); err != nil {
			log.Info("not observing "+k.Engine+" for the Applied condition: its CRD is not installed; restart the controller once it is",
				"kind", k.GVK.String(), "reason", err.Error())
			r.engines.absent = append(r.engines.absent, k)
			continue
		}
		log.Info("observing "+k.Engine+" for the Applied condition", "kind", k.GVK.String())
		r.engines.kinds = append(r.engines.kinds, k)
		b = b.Watches(k.New(), handler.EnqueueRequestsFromMapFunc(r.accountsOfEngineObject),
			builder.WithPredicates(engineChangedPredicate()))
	}
	return b
}

// valuesAccountsOfRelease are the accounts of a release delivered through
// its valuesFrom.
func (r *CredentialAccountReconciler) valuesAccountsOfRelease(ctx context.Context, o client.Object) []reconcile.Request {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{accountReleaseIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing CredentialAccounts", "index", accountReleaseIndex)
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.ValuesFrom != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// accountsOfEngineObject are the accounts whose Secret a Cluster's managed
// roles or a User names.
func (r *CredentialAccountReconciler) accountsOfEngineObject(ctx context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, name := range engineSecretNames(u) {
		reqs = append(reqs, r.accountsBy(ctx, u.GetNamespace(), accountSecretIndex, name)...)
	}
	return reqs
}

// engineSecretNames are the Secrets an operator object reads passwords from.
func engineSecretNames(u *unstructured.Unstructured) []string {
	switch u.GroupVersionKind() {
	case engine.ClusterGVK:
		if c, err := engine.DecodeCluster(u); err == nil {
			return c.SecretNames()
		}
	case engine.UserGVK:
		if user, err := engine.DecodeUser(u); err == nil {
			return user.SecretNames()
		}
	}
	return nil
}

// releaseHandledPredicate passes updates of a HelmRelease's status that
// can change what it says of its valuesFrom accounts: the last handled
// request, its Ready condition, observed generation and latest release.
// Not its requestedAt annotation: credo's own request would reconcile the
// account again before its status recorded the request; a request someone
// else overwrote is seen when helm-controller handles theirs. Creations,
// deletions and spec changes are the other watch's.
func releaseHandledPredicate() predicate.Predicate {
	type view struct {
		handled, attempted string
		observed           int64
		ready              metav1.Condition
		latest             helmv2.Snapshot
	}
	of := func(o client.Object) (view, bool) {
		hr, ok := o.(*helmv2.HelmRelease)
		if !ok {
			return view{}, false
		}
		v := view{handled: hr.Status.LastHandledReconcileAt,
			attempted: hr.Status.LastAttemptedConfigDigest, observed: hr.Status.ObservedGeneration}
		if c := conditions.Get(hr, meta.ReadyCondition); c != nil {
			v.ready = metav1.Condition{Status: c.Status, Reason: c.Reason, ObservedGeneration: c.ObservedGeneration}
		}
		if len(hr.Status.History) > 0 {
			latest := hr.Status.History.DeepCopy().Latest()
			v.latest = helmv2.Snapshot{Version: latest.Version, Status: latest.Status, ConfigDigest: latest.ConfigDigest}
		}
		return v, true
	}
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := of(e.ObjectOld)
			n, ok2 := of(e.ObjectNew)
			return ok1 && ok2 && o != n
		},
	}
}

// engineChangedPredicate passes creations and deletions of an operator
// object, and updates that change the Secrets it names or what it reports
// of them (a Cluster's managed roles status, a User's Ready condition).
func engineChangedPredicate() predicate.Predicate {
	of := func(o client.Object) any {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		switch u.GroupVersionKind() {
		case engine.ClusterGVK:
			if c, err := engine.DecodeCluster(u); err == nil {
				return c
			}
		case engine.UserGVK:
			if user, err := engine.DecodeUser(u); err == nil {
				ready := apimeta.FindStatusCondition(user.Status.Conditions, "Ready")
				return []any{user.SecretNames(), ready}
			}
		}
		return nil
	}
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !reflect.DeepEqual(of(e.ObjectOld), of(e.ObjectNew))
		},
	}
}
