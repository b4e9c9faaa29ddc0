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
	"errors"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/internal/projection"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/shard"
	"github.com/credo-dev/credo/internal/sourcecache"
)

// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustanchors,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=trust.credo.dev,resources=trustanchors/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// TrustAnchorFieldOwner is the field manager of everything the trust-controller writes.
const TrustAnchorFieldOwner = ControllerName

// trustAnchorSummary derives Ready. CertificateWarning and ProjectedByPlatform are owned but not
// summarized: a certificate close to expiry is still a working anchor.
var trustAnchorSummary = reconciler.Summary{
	FieldOwner:   TrustAnchorFieldOwner,
	ReadyMessage: "CA certificate projected",
	NegativePolarity: []string{
		trustv1.SourceUnavailableCondition,
		trustv1.SourceRejectedCondition,
		trustv1.ProjectionFailedCondition,
	},
	Informational: []string{trustv1.CertificateWarningCondition, trustv1.ProjectedByPlatformCondition},
}

// TrustAnchorReconciler reconciles one release's trust anchor. Requests are
// keyed by the release (the TrustAnchor is named after it), so the label and
// name legs reconcile a release before its TrustAnchor exists, and create it.
type TrustAnchorReconciler struct {
	client.Client
	// APIReader reads uncached what the caches cannot settle: a name-leg
	// source, a label-leg source the cache holds without its key.
	APIReader client.Reader
	// Sources is the cache of label-leg sources (internal/sourcecache): of
	// each labelled Secret, only its certificates. Its events reconcile
	// the releases they concern; nil reads every source uncached.
	Sources       cache.Cache
	EventRecorder events.Recorder
	fluxcontroller.Metrics

	Keys trustv1.ContractKeys
	// NamespaceSelector limits the namespaces served; nil serves all.
	NamespaceSelector labels.Selector
	// Shard is the part of the releases served (--watch-label-selector);
	// the zero Shard serves all. The manager's cache must hold only the
	// shard's ShardedObjects.
	Shard shard.Shard
	// ExpiryWarningWindow makes a certificate expiring within it ExpiringSoon.
	ExpiryWarningWindow time.Duration
	// SourceNamespaces are the platform's source namespaces, where a
	// TrustSource's chartRef without a namespace looks for its source
	// (--platform-source-namespaces).
	SourceNamespaces []string
	// Notices tells a release what the TrustSources that select it could
	// not do for it (an unresolved chart, no Secret name for it): a Warning
	// on the HelmRelease when it changes. Nil records none.
	Notices *release.Notices
	// TenantProjections says who writes the projections of releases a
	// TenantProjection of the platform claims (--tenant-projections).
	TenantProjections TenantProjectionMode
	// Now returns the time; time.Now when nil.
	Now func() time.Time

	// sentinels reads the platform's TenantProjections; nil when the API
	// server does not serve them (watchSentinels).
	sentinels client.Reader

	// echoes are the projections this reconciler wrote, whose watch events
	// need no reconcile (secretEvents).
	echoes projection.Echoes
}

// Reconcile discovers the release's sources, creates the TrustAnchor of a
// discovered source, and projects the CA certificate.
func (r *TrustAnchorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var hr *helmv2.HelmRelease
	var cands []candidate
	return reconciler.Run(ctx, req, &trustv1.TrustAnchor{}, reconciler.Steps[*trustv1.TrustAnchor]{
		Client:  r.Client,
		Metrics: r.Metrics,
		Summary: trustAnchorSummary,
		Start: func(ctx context.Context) (bool, error) {
			// The release and its namespace's labels are read once here,
			// and only from the cache.
			ns := &namespaceLabels{name: req.Namespace}
			if ok, err := r.serves(ctx, ns); err != nil || !ok {
				return false, client.IgnoreNotFound(err)
			}
			hr = &helmv2.HelmRelease{}
			if err := r.Get(ctx, req.NamespacedName, hr); err != nil {
				if !apierrors.IsNotFound(err) {
					return false, err
				}
				hr = nil
				if ok, err := r.servesWithoutRelease(ctx, req); err != nil || !ok {
					return false, err
				}
			}
			var problems []ruleProblem
			var err error
			cands, problems, err = r.discover(ctx, req.Namespace, req.Name, hr, ns)
			if err == nil {
				r.notify(req.NamespacedName, hr, problems)
			}
			return err == nil, err
		},
		Missing: func(ctx context.Context) error {
			first, ok := firstActive(cands)
			if hr == nil || !ok || !hr.DeletionTimestamp.IsZero() {
				return nil
			}
			// Its creation event reconciles it.
			return r.createDiscovered(ctx, hr, first)
		},
		Suspended: func(ta *trustv1.TrustAnchor) bool { return ta.Spec.Suspend },
		Observed:  func(ta *trustv1.TrustAnchor) int64 { return ta.Status.ObservedGeneration },
		Reconcile: func(ctx context.Context, ta *trustv1.TrustAnchor) (ctrl.Result, error) {
			err := r.project(ctx, ta, hr, cands)
			r.tellSentinel(ctx, ta, err)
			return ctrl.Result{}, err
		},
	})
}

// noticeScope is the scope of the trust-controller's notices on releases.
const noticeScope = "trustsource"

// notify tells the release hr (nil when it is gone) what rules could not
// do for it, once per change: a Warning on the HelmRelease, with the
// reason of the first problem.
func (r *TrustAnchorReconciler) notify(key client.ObjectKey, hr *helmv2.HelmRelease, problems []ruleProblem) {
	if r.Notices == nil {
		return
	}
	if hr == nil || len(problems) == 0 {
		r.Notices.Clear(key, noticeScope)
		return
	}
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.message)
	}
	r.Notices.Report(hr, noticeScope, problems[0].reason, strings.Join(msgs, "; "))
}

// project is the reconcile chain of an existing TrustAnchor.
func (r *TrustAnchorReconciler) project(ctx context.Context, ta *trustv1.TrustAnchor, hr *helmv2.HelmRelease, cands []candidate) error {
	if ta.GetOwnerKind() == trustv1.OwnerTrustAnchor {
		// A platform anchor: a HelmRelease of the name, if any, neither
		// owns its projection nor hears of it (its claims still count).
		hr = nil
	}
	ev := r.events(hr)
	if err := r.followDiscovery(ctx, ta, cands); err != nil {
		return unavailable(ev, ta, err)
	}
	owner, err := projectionOwner(ta, hr)
	if err != nil {
		return unavailable(ev, ta, err)
	}
	if handled, err := r.leaveToPlatform(ctx, ev, ta); handled {
		return err
	}
	raw, err := r.readSource(ctx, ta)
	if err != nil {
		return unavailable(ev, ta, err)
	}
	conditions.Delete(ta, trustv1.SourceUnavailableCondition)
	res, err := r.writer().Write(ctx, ta.Namespace, owner, raw)
	if err != nil {
		return writeFailed(ev, ta, err)
	}
	conditions.Delete(ta, trustv1.SourceRejectedCondition)
	conditions.Delete(ta, trustv1.ProjectionFailedCondition)
	if res.Adopted {
		r.EventRecorder.AnnotatedEventf(ta, nil, anchorEventMetadata(ta), corev1.EventTypeNormal, trustv1.AdoptedReason, eventActionProject,
			"took Secret %s over from the platform's TenantProjection controller: the same Secret, owner-referenced to HelmRelease %s from now on (--tenant-projections=credo)",
			ta.ProjectionName(), ta.Spec.Release)
	}
	r.recordProjection(ta, res)
	return r.checkCertificates(ev, ta, res.Bundle)
}

// projectionOwner is what the projection of ta is owner-referenced to:
// the HelmRelease hr (waiting for it while it does not exist) or, with
// spec.owner TrustAnchor, ta itself.
func projectionOwner(ta *trustv1.TrustAnchor, hr *helmv2.HelmRelease) (projection.Owner, error) {
	if ta.GetOwnerKind() == trustv1.OwnerTrustAnchor {
		return projection.AnchorOwner(ta), nil
	}
	if hr == nil {
		return projection.Owner{}, reconciler.NewWaiting(trustv1.HelmReleaseNotFoundReason,
			"HelmRelease %s not found", ta.Spec.Release)
	}
	return projection.ReleaseOwner(hr), nil
}

// followDiscovery keeps a discovered TrustAnchor's source on its leg's claim
// and refuses more than one claim on the release.
func (r *TrustAnchorReconciler) followDiscovery(ctx context.Context, ta *trustv1.TrustAnchor, cands []candidate) error {
	leg, ts := legOf(ta)
	setLeg(ta, leg, ts)
	claims := resolve(ta, cands)
	if leg == trustv1.LegDeclared {
		claims = dedupe(append([]candidate{{leg: leg, source: ta.Spec.Source}}, claims...))
	}
	if len(claims) > 1 {
		names := make([]string, 0, len(claims))
		for _, c := range claims {
			names = append(names, c.String())
		}
		return reconciler.NewStalling(trustv1.AmbiguousSourceReason,
			"%d sources claim release %s: %s; remove all but one", len(claims), ta.Spec.Release, strings.Join(names, ", "))
	}
	if leg == trustv1.LegDeclared {
		return nil
	}
	if len(claims) == 0 {
		return reconciler.NewStalling(trustv1.SourceWithdrawnReason,
			"no label or TrustSource claims release %s any more; the last projection is kept until the HelmRelease is deleted", ta.Spec.Release)
	}
	c := claims[0]
	if ta.Spec.Source == c.source && ta.Annotations[trustv1.DiscoveredByAnnotation] == c.discoveredBy() {
		return nil
	}
	before := ta.DeepCopy()
	ta.Spec.Source = c.source
	metav1.SetMetaDataAnnotation(&ta.ObjectMeta, trustv1.DiscoveredByAnnotation, c.discoveredBy())
	if err := r.Patch(ctx, ta, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("moving TrustAnchor to %s: %w", c, err)
	}
	setLeg(ta, c.leg, c.trustSource)
	return nil
}

// setLeg records the leg in the status, and the TrustSource or
// TenantProjection name of those legs.
func setLeg(ta *trustv1.TrustAnchor, leg trustv1.Leg, name string) {
	ta.Status.Leg, ta.Status.TrustSource, ta.Status.TenantProjection = leg, "", ""
	switch leg {
	case trustv1.LegTrustSource:
		ta.Status.TrustSource = name
	case trustv1.LegTenantProjection:
		ta.Status.TenantProjection = name
	}
}

// readSource returns the value of the source's key: from the cache of
// label-leg sources when it holds it, else read uncached (a name-leg source,
// a source not seen yet, a key missing or refused, which the uncached read
// and the writer's guard report).
func (r *TrustAnchorReconciler) readSource(ctx context.Context, ta *trustv1.TrustAnchor) ([]byte, error) {
	key := client.ObjectKey{Namespace: ta.Namespace, Name: ta.Spec.Source.Name}
	if v, ok := sourcecache.Value(ctx, r.Sources, key, ta.GetSourceKey()); ok {
		return v, nil
	}
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, reconciler.NewWaiting(trustv1.SourceNotFoundReason,
				"waiting for Secret %s to be created", ta.Spec.Source.Name)
		}
		return nil, fmt.Errorf("reading Secret %s: %w", ta.Spec.Source.Name, err)
	}
	v, ok := s.Data[ta.GetSourceKey()]
	if !ok || len(v) == 0 {
		// A Secret without the key needs its writer's attention: a Warning.
		return nil, reconciler.NewWaiting(trustv1.KeyNotFoundReason,
			"Secret %s has no key %s", ta.Spec.Source.Name, ta.GetSourceKey()).Warn()
	}
	return v, nil
}

// unavailable marks SourceUnavailable with the error's reason.
func unavailable(ev reconciler.Events, ta *trustv1.TrustAnchor, err error) error {
	markFailure(ev, ta, trustv1.SourceUnavailableCondition, err)
	return err
}

// writeFailed turns a projection error into a condition and a typed error.
func writeFailed(ev reconciler.Events, ta *trustv1.TrustAnchor, err error) error {
	var guard *pem.Error
	switch {
	case errors.As(err, &guard):
		metrics.KeyRefused(ta.Namespace, string(guard.Reason))
		err = reconciler.NewStalling(string(guard.Reason),
			"refused Secret %s key %s: %s%s; %s", ta.Spec.Source.Name, ta.GetSourceKey(), guard.Detail, whyRefused(guard), keptProjection(ta))
		markFailure(ev, ta, trustv1.SourceRejectedCondition, err)
	case errors.Is(err, projection.ErrCollision):
		metrics.TrustCollision(ta.Namespace)
		err = reconciler.NewStalling(trustv1.NameCollisionReason,
			"Secret %s exists and was not created by credo, which never overwrites a Secret it did not create; it is left untouched: delete it for credo to project here", ta.ProjectionName())
		markFailure(ev, ta, trustv1.ProjectionFailedCondition, err)
	default:
		err = &reconciler.Generic{Reason: trustv1.WriteFailedReason, Err: err}
		markFailure(ev, ta, trustv1.ProjectionFailedCondition, err)
	}
	return err
}

// whyRefused says which guard a refusal is: a private key never passes.
func whyRefused(guard *pem.Error) string {
	if guard.Reason == pem.ReasonPrivateKey {
		return ", and credo never projects a private key"
	}
	return ""
}

// keptProjection says what a refused source leaves in place: the last
// projection when there is one, else nothing.
func keptProjection(ta *trustv1.TrustAnchor) string {
	if ta.Status.ProjectedSecret == "" {
		return "nothing is projected until it holds only certificates"
	}
	return fmt.Sprintf("Secret %s keeps the certificates projected before", ta.Status.ProjectedSecret)
}

// markFailure sets a negative-polarity condition from a typed error, with
// the event its policy asks for when the condition is new (a transition),
// a Warning on the release's HelmRelease too.
func markFailure(ev reconciler.Events, ta *trustv1.TrustAnchor, condType string, err error) {
	_ = ev.Fail(ta, condType, err, anchorEventMetadata(ta))
}

// events records the trust-controller's events about the release hr (nil
// when it is not found).
func (r *TrustAnchorReconciler) events(hr *helmv2.HelmRelease) reconciler.Events {
	return reconciler.Events{Recorder: r.EventRecorder, Action: eventActionProject, Release: hr}
}

// writer returns the one write path of projections. It decides from the
// manager's metadata cache of Secrets (ConfigureCache keeps the managers of
// projections' managedFields there) when it can, and records its writes'
// echoes.
func (r *TrustAnchorReconciler) writer() *projection.Writer {
	return &projection.Writer{
		Client: r.Client, Reader: r.APIReader, Cache: r.Client, Echoes: &r.echoes,
		FieldOwner: TrustAnchorFieldOwner, TenantCALabel: r.Keys.TenantCA, Adopt: r.adoption(),
	}
}

// serves reports whether the namespace matches the namespace selector.
func (r *TrustAnchorReconciler) serves(ctx context.Context, ns *namespaceLabels) (bool, error) {
	if r.NamespaceSelector == nil || r.NamespaceSelector.Empty() {
		return true, nil
	}
	l, err := ns.get(ctx, r.Client)
	if err != nil {
		return false, err
	}
	return r.NamespaceSelector.Matches(l), nil
}

func (r *TrustAnchorReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
