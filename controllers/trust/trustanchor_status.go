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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/credo-dev/credo/internal/release"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/pem"
	"github.com/credo-dev/credo/internal/projection"
	"github.com/credo-dev/credo/internal/reconciler"
)

// eventRevisionAnnotation carries the projection's fingerprint on events,
// as Flux's revision annotation does.
const eventRevisionAnnotation = trustv1.EventFingerprintKey

// anchorEventMetadata is the metadata of every event on ta, plus extra
// key-value pairs: what notification-controller forwards beside the reason,
// so that an alert names the release and the Secrets without a lookup.
func anchorEventMetadata(ta *trustv1.TrustAnchor, extra ...string) map[string]string {
	md := map[string]string{
		trustv1.EventReleaseKey:    ta.Spec.Release,
		trustv1.EventSourceKey:     ta.Spec.Source.Name,
		trustv1.EventSourceKeyKey:  ta.GetSourceKey(),
		trustv1.EventProjectionKey: ta.ProjectionName(),
	}
	// The leg as this reconcile found it (followDiscovery, its first step).
	if ta.Status.Leg != "" {
		md[trustv1.EventLegKey] = string(ta.Status.Leg)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		md[extra[i]] = extra[i+1]
	}
	return md
}

// eventActionProject is the action of every trust-controller event.
const eventActionProject = "Project"

// recordProjection writes what was projected into the status, and emits an
// event when the content changed (a new output).
func (r *TrustAnchorReconciler) recordProjection(ta *trustv1.TrustAnchor, res *projection.Result) {
	if res.Changed {
		metrics.ProjectionWritten(ta.Namespace)
	}
	fp := r.recordCertificates(ta, res.Bundle)
	if !res.Changed && ta.Status.LastRotationTime != nil {
		return
	}
	ta.Status.LastRotationTime = ptr.To(metav1.NewTime(r.now()))
	r.EventRecorder.AnnotatedEventf(ta, nil, anchorEventMetadata(ta, eventRevisionAnnotation, fp), corev1.EventTypeNormal,
		trustv1.ProjectedReason, eventActionProject, "projected %d certificate(s) from Secret %s key %s into Secret %s (%s)",
		len(res.Bundle.Certificates), ta.Spec.Source.Name, ta.GetSourceKey(), ta.ProjectionName(), fp)
}

// recordCertificates writes the projected certificates of bundle into the
// status and returns their fingerprint.
func (r *TrustAnchorReconciler) recordCertificates(ta *trustv1.TrustAnchor, bundle *pem.Bundle) string {
	certs := bundle.Certificates
	ta.Status.ProjectedSecret = ta.ProjectionName()
	ta.Status.Certificates = make([]trustv1.CertificateInfo, 0, len(certs))
	var earliest *metav1.Time
	for _, c := range certs {
		sum := sha256.Sum256(c.Raw)
		na := metav1.NewTime(c.NotAfter)
		ta.Status.Certificates = append(ta.Status.Certificates, trustv1.CertificateInfo{
			SHA256: hex.EncodeToString(sum[:]), Subject: c.Subject.String(), NotAfter: na, IsCA: c.IsCA,
		})
		if earliest == nil || na.Before(earliest) {
			earliest = ptr.To(na)
		}
	}
	ta.Status.NotAfter = earliest
	// The same re-encoded certificates as the projection, for readers of
	// the TrustAnchor who may read no Secret.
	ta.Status.CABundle = ""
	if len(bundle.PEM) <= trustv1.MaxCABundleLength {
		ta.Status.CABundle = string(bundle.PEM)
	}
	ta.Status.Fingerprint = "sha256:" + ta.Status.Certificates[0].SHA256[:16]
	return ta.Status.Fingerprint
}

// checkCertificates reports what is wrong with certificates that were
// projected anyway. Only expiry makes the anchor not Ready.
func (r *TrustAnchorReconciler) checkCertificates(ev reconciler.Events, ta *trustv1.TrustAnchor, bundle *pem.Bundle) error {
	findings := pem.Check(bundle.Certificates, r.now(), r.ExpiryWarningWindow)
	if len(findings) == 0 {
		conditions.Delete(ta, trustv1.CertificateWarningCondition)
		return nil
	}
	msgs := make([]string, 0, len(findings))
	reason := string(findings[0].Kind)
	for _, f := range findings {
		msgs = append(msgs, f.Message)
		if f.Kind == pem.FindingExpired {
			reason = string(f.Kind)
		}
	}
	err := reconciler.NewStalling(reason, "%s", strings.Join(msgs, "; "))
	markFailure(ev, ta, trustv1.CertificateWarningCondition, err)
	if reason == trustv1.ExpiredReason {
		return err
	}
	return nil
}

// createDiscovered creates the TrustAnchor of a release from its first
// claim, owner-referenced to the HelmRelease like the projection and
// labelled with its shard.
func (r *TrustAnchorReconciler) createDiscovered(ctx context.Context, hr *helmv2.HelmRelease, c candidate) error {
	ta := &trustv1.TrustAnchor{
		ObjectMeta: metav1.ObjectMeta{
			Name:            hr.Name,
			Namespace:       hr.Namespace,
			Annotations:     map[string]string{trustv1.DiscoveredByAnnotation: c.discoveredBy()},
			OwnerReferences: []metav1.OwnerReference{release.OwnerReference(hr)},
		},
		Spec: trustv1.TrustAnchorSpec{Release: hr.Name, Source: c.source},
	}
	r.Shard.Stamp(ta, hr)
	// AlreadyExists: another event created it first (its creation event
	// follows), or another shard holds it.
	if err := r.Create(ctx, ta, client.FieldOwner(TrustAnchorFieldOwner)); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating TrustAnchor for %s: %w", c, err)
		}
		return r.takeOver(ctx, ta)
	}
	return nil
}
