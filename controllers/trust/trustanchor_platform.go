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
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/internal/projection"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/tenantprojection"
)

// +kubebuilder:rbac:groups=internal.cozystack.io,resources=tenantprojections,verbs=get;list;watch
// +kubebuilder:rbac:groups=internal.cozystack.io,resources=tenantprojections/status,verbs=get;patch

// TenantProjectionMode says who writes the projections of the releases a
// TenantProjection of the platform claims (--tenant-projections).
type TenantProjectionMode string

const (
	// TenantProjectionsPlatform: the platform's own TenantProjection
	// controller writes them. credo records each on the TrustAnchor
	// (ProjectedByPlatform), never writes it, writes nothing in the
	// sentinels, and hands any projection it wrote for such a release to
	// the platform's controller (owner-referenced to the sentinel). The
	// default: on a platform that runs its controller, no fight.
	TenantProjectionsPlatform TenantProjectionMode = "platform"
	// TenantProjectionsCredo: credo writes them, through its one write
	// path, and the sentinels' Ready; a projection the platform's
	// controller wrote is taken over in place (same Secret, same bytes
	// unless the source changed). Only once that controller is stopped.
	TenantProjectionsCredo TenantProjectionMode = "credo"
)

// ParseTenantProjectionMode validates the flag's value.
func ParseTenantProjectionMode(v string) (TenantProjectionMode, error) {
	switch m := TenantProjectionMode(v); m {
	case TenantProjectionsPlatform, TenantProjectionsCredo:
		return m, nil
	case "":
		return TenantProjectionsPlatform, nil
	}
	return "", fmt.Errorf("invalid --tenant-projections %q: platform or credo", v)
}

// watchSentinels watches the platform's TenantProjections when the API
// server serves their kind: each reconciles the release its label names
// (the old one too when the label changes). A kind installed later is seen
// after a restart, as the Applied condition's operator kinds are.
func (r *TrustAnchorReconciler) watchSentinels(b *builder.Builder, mgr ctrl.Manager) *builder.Builder {
	log := mgr.GetLogger().WithName("tenantprojections")
	gvk := tenantprojection.GVK
	if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		log.Info("not reading TenantProjections: their CRD is not installed; restart the controller once it is", "reason", err.Error())
		return b
	}
	log.Info("reading TenantProjections", "writer", string(r.TenantProjections))
	r.sentinels = mgr.GetCache()
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	add := func(q queue, objs ...client.Object) {
		for _, o := range objs {
			if rel := o.GetLabels()[tenantprojection.ReleaseLabel]; rel != "" {
				q.Add(reconciler.Request(o.GetNamespace(), rel))
			}
		}
	}
	return b.Watches(tenantprojection.New(), handler.Funcs{
		CreateFunc:  func(_ context.Context, e event.CreateEvent, q queue) { add(q, e.Object) },
		UpdateFunc:  func(_ context.Context, e event.UpdateEvent, q queue) { add(q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc:  func(_ context.Context, e event.DeleteEvent, q queue) { add(q, e.Object) },
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { add(q, e.Object) },
	}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})))
}

// sentinelClaims are the claims of the TenantProjections that name the
// release, by name, in the order of their entries.
func (r *TrustAnchorReconciler) sentinelClaims(ctx context.Context, namespace, release string) ([]candidate, error) {
	if r.sentinels == nil {
		return nil, nil
	}
	sentinels, err := tenantprojection.List(ctx, r.sentinels, namespace, release)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, s := range sentinels {
		for _, src := range s.Sources {
			out = append(out, candidate{leg: trustv1.LegTenantProjection, trustSource: s.Name,
				source: trustv1.SecretKeySource{Name: src.SecretName, Key: src.Key}})
		}
	}
	return out, nil
}

// leaveToPlatform handles, with --tenant-projections=platform, a release
// whose projection is the platform controller's: one it wrote (or was
// handed) is recorded, never written; one credo wrote for a release a
// TenantProjection claims is handed to it; while a TenantProjection claims
// the release and no projection exists, credo waits for the platform's.
// It reports whether it handled the release; if not, credo projects it.
func (r *TrustAnchorReconciler) leaveToPlatform(ctx context.Context, ev reconciler.Events, ta *trustv1.TrustAnchor) (bool, error) {
	if r.sentinels == nil || r.TenantProjections == TenantProjectionsCredo {
		conditions.Delete(ta, trustv1.ProjectedByPlatformCondition)
		return false, nil
	}
	claimed := ta.Status.Leg == trustv1.LegTenantProjection
	key := client.ObjectKey{Namespace: ta.Namespace, Name: ta.ProjectionName()}
	// The metadata cache settles most releases (no projection, or credo's
	// own for a release no sentinel claims) without a request.
	var cached metav1.PartialObjectMetadata
	cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := r.Get(ctx, key, &cached)
	switch {
	case apierrors.IsNotFound(err):
		if claimed {
			return true, r.waitForPlatform(ev, ta)
		}
	case err != nil:
		return true, unavailable(ev, ta, fmt.Errorf("reading Secret %s from the cache: %w", ta.ProjectionName(), err))
	case isPlatformProjection(&cached), claimed && fieldowner.Wrote(&cached, TrustAnchorFieldOwner):
		// Its certificates are recorded: read it whole.
		var current corev1.Secret
		err := r.APIReader.Get(ctx, key, &current)
		switch {
		case apierrors.IsNotFound(err) && claimed:
			return true, r.waitForPlatform(ev, ta)
		case apierrors.IsNotFound(err):
			// Gone since the cache saw it: credo projects the release.
		case err != nil:
			return true, unavailable(ev, ta, fmt.Errorf("reading Secret %s: %w", ta.ProjectionName(), err))
		case isPlatformProjection(&current):
			return true, r.recordPlatform(ev, ta, &current)
		case claimed:
			handed, err := r.handBack(ctx, ta, &current)
			if err != nil {
				return true, unavailable(ev, ta, err)
			}
			if handed {
				return true, r.recordPlatform(ev, ta, &current)
			}
		}
	}
	conditions.Delete(ta, trustv1.ProjectedByPlatformCondition)
	return false, nil
}

// waitForPlatform reports that the platform's controller has not projected
// the release a TenantProjection claims yet; its write reconciles it.
func (r *TrustAnchorReconciler) waitForPlatform(ev reconciler.Events, ta *trustv1.TrustAnchor) error {
	return unavailable(ev, ta, reconciler.NewWaiting(trustv1.WaitingForPlatformReason,
		"TenantProjection %s claims release %s: the platform's TenantProjection controller projects it (--tenant-projections=platform); waiting for Secret %s",
		ta.Status.TenantProjection, ta.Spec.Release, ta.ProjectionName()))
}

// handBack gives the projection current, which credo wrote, to the
// platform's controller: owner-referenced to the TenantProjection that
// claims the release, which that controller takes for its own. It reports
// whether it did (not when the Secret turns out not to be credo's).
func (r *TrustAnchorReconciler) handBack(ctx context.Context, ta *trustv1.TrustAnchor, current *corev1.Secret) (bool, error) {
	u := tenantprojection.New()
	if err := r.sentinels.Get(ctx, client.ObjectKey{Namespace: ta.Namespace, Name: ta.Status.TenantProjection}, u); err != nil {
		return false, fmt.Errorf("reading TenantProjection %s: %w", ta.Status.TenantProjection, err)
	}
	ref := tenantprojection.Decode(u).OwnerReference()
	handed, err := r.writer().HandOver(ctx, ta.Namespace, ta.Spec.Release, ref)
	if err != nil || !handed {
		return false, err
	}
	current.OwnerReferences = []metav1.OwnerReference{ref}
	r.EventRecorder.AnnotatedEventf(ta, nil, anchorEventMetadata(ta), corev1.EventTypeNormal, trustv1.HandedBackReason, eventActionProject,
		"handed Secret %s to the platform's TenantProjection controller: owner-referenced to TenantProjection %s, the same Secret and bytes (--tenant-projections=platform)",
		ta.ProjectionName(), ref.Name)
	return true, nil
}

// recordPlatform records the platform's projection current on ta: its
// certificates (checked as credo's own are), ProjectedByPlatform and, when
// that is new, one Normal event. Nothing is written but ta's status.
func (r *TrustAnchorReconciler) recordPlatform(ev reconciler.Events, ta *trustv1.TrustAnchor, current *corev1.Secret) error {
	for _, c := range []string{trustv1.SourceUnavailableCondition, trustv1.SourceRejectedCondition, trustv1.ProjectionFailedCondition} {
		conditions.Delete(ta, c)
	}
	ref, _ := tenantprojection.PlatformOwner(current)
	msg := fmt.Sprintf("Secret %s is the platform's: its TenantProjection controller writes it (TenantProjection %s); credo records it and does not write it (--tenant-projections=platform)",
		ta.ProjectionName(), ref.Name)
	if !conditions.IsTrue(ta, trustv1.ProjectedByPlatformCondition) {
		r.EventRecorder.AnnotatedEventf(ta, nil, anchorEventMetadata(ta), corev1.EventTypeNormal, trustv1.PlatformProjectionReason, eventActionProject, "%s", msg)
	}
	conditions.MarkTrue(ta, trustv1.ProjectedByPlatformCondition, trustv1.PlatformProjectionReason, "%s", msg)
	bundle, err := pem.Parse(current.Data[trustv1.ProjectionKey])
	if err != nil {
		// The platform's guard wrote it; what credo's refuses is left to it.
		return nil
	}
	before := ta.Status.Fingerprint
	if fp := r.recordCertificates(ta, bundle); ta.Status.LastRotationTime == nil || fp != before {
		ta.Status.LastRotationTime = ptr.To(metav1.NewTime(r.now()))
	}
	return r.checkCertificates(ev, ta, bundle)
}

// isPlatformProjection reports whether s belongs to a TenantProjection.
func isPlatformProjection(s metav1.Object) bool {
	_, ok := tenantprojection.PlatformOwner(s)
	return ok
}

// adoption is how the writer treats the platform controller's projections:
// never written with --tenant-projections=platform; taken over with
// credo, when the TenantProjection its owner reference names is the live
// one that claims the release.
func (r *TrustAnchorReconciler) adoption() *projection.Adoption {
	a := &projection.Adoption{
		Claims: isPlatformProjection,
		Marks:  []string{tenantprojection.CopyLabel, tenantprojection.SourceAnnotation, tenantprojection.SelectorsAnnotation},
	}
	if r.sentinels != nil && r.TenantProjections == TenantProjectionsCredo {
		a.Allowed = r.mayAdopt
	}
	return a
}

// mayAdopt reports whether the platform's projection s belongs to the live
// TenantProjection (by UID) that names its release.
func (r *TrustAnchorReconciler) mayAdopt(ctx context.Context, s *corev1.Secret) bool {
	ref, ok := tenantprojection.PlatformOwner(s)
	if !ok {
		return false
	}
	u := tenantprojection.New()
	if err := r.sentinels.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: ref.Name}, u); err != nil {
		return false
	}
	sentinel := tenantprojection.Decode(u)
	release, _ := strings.CutSuffix(s.Name, trustv1.ProjectionSuffix)
	return sentinel.UID == string(ref.UID) && sentinel.Release == release
}

// tellSentinel writes, with --tenant-projections=credo, the Ready of the
// TenantProjection that claims ta's release, in the platform's reasons:
// what credo did for it. Never with platform: the sentinel's status is the
// platform controller's then.
func (r *TrustAnchorReconciler) tellSentinel(ctx context.Context, ta *trustv1.TrustAnchor, projectErr error) {
	if r.sentinels == nil || r.TenantProjections != TenantProjectionsCredo || ta.Status.Leg != trustv1.LegTenantProjection {
		return
	}
	status, reason, msg := metav1.ConditionTrue, tenantprojection.ProjectedReason,
		fmt.Sprintf("credo projected Secret %s key %s into Secret %s (TrustAnchor %s)", ta.Spec.Source.Name, ta.GetSourceKey(), ta.ProjectionName(), ta.Name)
	if projectErr != nil {
		status, reason, msg = metav1.ConditionFalse, sentinelReason(reconciler.ReasonOf(projectErr)), projectErr.Error()
	}
	key := client.ObjectKey{Namespace: ta.Namespace, Name: ta.Status.TenantProjection}
	if err := tenantprojection.SetReady(ctx, r.sentinels, r.Client, key, status, reason, msg, TrustAnchorFieldOwner); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "writing the TenantProjection's Ready", "tenantprojection", key.Name)
	}
}

// sentinelReason is the platform's reason for a TrustAnchor's reason.
func sentinelReason(reason string) string {
	switch reason {
	case trustv1.SourceNotFoundReason:
		return tenantprojection.SourceNotFoundReason
	case trustv1.KeyNotFoundReason:
		return tenantprojection.SourceNotReadyReason
	case trustv1.PrivateKeyDetectedReason, trustv1.InvalidCertificateReason:
		return tenantprojection.SourceRejectedReason
	case trustv1.NameCollisionReason:
		return tenantprojection.ProjectionCollisionReason
	case trustv1.AmbiguousSourceReason:
		return tenantprojection.ReleaseContestedReason
	case trustv1.HelmReleaseNotFoundReason:
		return tenantprojection.NoReleaseReason
	}
	return reason
}
