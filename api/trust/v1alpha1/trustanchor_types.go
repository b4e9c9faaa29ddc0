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

package v1alpha1

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// TrustAnchorKind is the kind of a TrustAnchor.
	TrustAnchorKind = "TrustAnchor"

	// DefaultSourceKey is the key lifted from a source Secret when none is given.
	DefaultSourceKey = "ca.crt"

	// ProjectionKey is the one key of a projected Secret.
	ProjectionKey = "ca.crt"

	// MaxCABundleLength is the largest status.caBundle, in bytes.
	MaxCABundleLength = 1 << 20

	// ProjectionSuffix makes the projected Secret's name: <release>.tenant-ca.
	// The dot cannot appear in operator-generated names, so it cannot collide
	// with the CA Secret of a neighbouring release.
	ProjectionSuffix = ".tenant-ca"

	// DiscoveredByAnnotation is set by the trust-controller on the TrustAnchors
	// it creates: "label" for the label leg, "trustsource/<name>" for the name
	// leg, "tenantprojection/<name>" for a TenantProjection of the platform.
	// A TrustAnchor without it was declared (rendered by a chart).
	DiscoveredByAnnotation = "trust.credo.dev/discovered-by"

	defaultInterval = time.Hour
)

// Leg says how the source of a TrustAnchor was found.
// +kubebuilder:validation:Enum=Label;TrustSource;TenantProjection;Declared
type Leg string

const (
	// LegLabel: a Secret labelled <d>/publish-ca-cert="true".
	LegLabel Leg = "Label"
	// LegTrustSource: a TrustSource rule naming the Secret after the release.
	LegTrustSource Leg = "TrustSource"
	// LegTenantProjection: a TenantProjection (internal.cozystack.io), the
	// platform's sentinel its charts render, names the source.
	LegTenantProjection Leg = "TenantProjection"
	// LegDeclared: the TrustAnchor was declared, typically rendered by the chart.
	LegDeclared Leg = "Declared"
)

// OwnerKind is what a projection is owner-referenced to, and deleted with.
// +kubebuilder:validation:Enum=HelmRelease;TrustAnchor
type OwnerKind string

const (
	// OwnerHelmRelease: the HelmRelease named spec.release, in the
	// TrustAnchor's namespace. It must exist for anything to be projected.
	OwnerHelmRelease OwnerKind = "HelmRelease"
	// OwnerTrustAnchor: the TrustAnchor itself, for a platform anchor no
	// HelmRelease stands for (the enrollment CA). No HelmRelease is read.
	OwnerTrustAnchor OwnerKind = "TrustAnchor"
)

// ProjectionOwner names what the projection is owner-referenced to.
type ProjectionOwner struct {
	// kind of the owner: HelmRelease (the HelmRelease named spec.release)
	// or TrustAnchor (this TrustAnchor). The owner reference has
	// blockOwnerDeletion false.
	// +required
	Kind OwnerKind `json:"kind"`
}

// TrustAnchorSpec names a release and the Secret its CA certificate is lifted from.
// +kubebuilder:validation:XValidation:rule="self.release == oldSelf.release",message="release is immutable"
// +kubebuilder:validation:XValidation:rule="(has(self.owner) ? self.owner.kind : 'HelmRelease') == (has(oldSelf.owner) ? oldSelf.owner.kind : 'HelmRelease')",message="owner is immutable"
type TrustAnchorSpec struct {
	// release is the name of the HelmRelease, in the TrustAnchor's namespace,
	// the CA belongs to. The projection <release>.tenant-ca is owned by it and
	// is garbage-collected with it, unless owner says otherwise; with owner
	// TrustAnchor it only names the projection.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=243
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Release string `json:"release"`

	// source is the Secret, in the TrustAnchor's namespace, and the key the CA
	// certificate is lifted from.
	// +required
	Source SecretKeySource `json:"source"`

	// owner is what the projection is owner-referenced to, and
	// garbage-collected with: the HelmRelease named release when omitted.
	// Only a declared TrustAnchor sets it; immutable.
	// +optional
	Owner *ProjectionOwner `json:"owner,omitempty"`

	// interval at which the projection is re-checked without a change of the
	// source, to report expiry. Changes of the source are seen by watch at once.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:default="1h"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// suspend stops the projection from being updated; the existing
	// projection is left as it is.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// SecretKeySource is a key of a Secret in the same namespace.
type SecretKeySource struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// key whose value is lifted. Defaults to ca.crt.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:default="ca.crt"
	// +optional
	Key string `json:"key,omitempty"`
}

// CertificateInfo describes one projected certificate.
type CertificateInfo struct {
	// sha256 is the hex SHA-256 fingerprint of the DER certificate.
	// +kubebuilder:validation:MaxLength=64
	// +required
	SHA256 string `json:"sha256"`

	// subject is the certificate's subject distinguished name.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Subject string `json:"subject"`

	// notAfter is the end of the certificate's validity.
	// +required
	NotAfter metav1.Time `json:"notAfter"`

	// isCA tells whether basicConstraints marks the certificate as a CA.
	// +optional
	IsCA bool `json:"isCA,omitempty"`
}

// TrustAnchorStatus records the projection.
type TrustAnchorStatus struct {
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling, Stalled and the negative-polarity
	// conditions of condition_types.go.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// leg says how the source was found.
	// +optional
	Leg Leg `json:"leg,omitempty"`

	// trustSource names the TrustSource rule on the TrustSource leg.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TrustSource string `json:"trustSource,omitempty"`

	// tenantProjection names the TenantProjection on the TenantProjection leg.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TenantProjection string `json:"tenantProjection,omitempty"`

	// projectedSecret is the name of the projection, <release>.tenant-ca, once written.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ProjectedSecret string `json:"projectedSecret,omitempty"`

	// fingerprint is a short form of the first certificate's SHA-256
	// fingerprint, for display.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`

	// notAfter is the earliest expiry among the projected certificates.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`

	// certificates are the projected certificates, in the order of the bundle.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Certificates []CertificateInfo `json:"certificates,omitempty"`

	// caBundle is the projected certificates as PEM text (not base64): the
	// same re-encoded CERTIFICATE blocks the trust-controller writes to
	// <release>.tenant-ca, and never anything else. It lets everyone who may
	// read the TrustAnchor (the built-in view role, by aggregation) read the
	// CA without any Secret read: kubectl credo ca <release>. Left empty for
	// a bundle over 1 MiB.
	// +kubebuilder:validation:MaxLength=1048576
	// +optional
	CABundle string `json:"caBundle,omitempty"`

	// lastRotationTime is when the projection's content last changed.
	// +optional
	LastRotationTime *metav1.Time `json:"lastRotationTime,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ta,categories=credo;credo-all;trust
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source.name`
// +kubebuilder:printcolumn:name="Leg",type=string,JSONPath=`.status.leg`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.notAfter`
// +kubebuilder:printcolumn:name="Fingerprint",type=string,JSONPath=`.status.fingerprint`,priority=1
// +kubebuilder:printcolumn:name="Last Rotation",type=date,JSONPath=`.status.lastRotationTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// TrustAnchor records the projection of one release's CA certificate into
// the key-free Secret <release>.tenant-ca. It is named after the release:
// the trust-controller reconciles releases, and finds a release's anchor by
// the release's name.
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.release",message="a TrustAnchor is named after its release: metadata.name must equal spec.release"
type TrustAnchor struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names a release and the Secret its CA certificate is lifted from.
	// +required
	Spec TrustAnchorSpec `json:"spec"`

	// status records the projection.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status TrustAnchorStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *TrustAnchor) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *TrustAnchor) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetInterval returns the re-check interval, one hour by default.
func (in *TrustAnchor) GetInterval() time.Duration {
	if in.Spec.Interval == nil || in.Spec.Interval.Duration <= 0 {
		return defaultInterval
	}
	return in.Spec.Interval.Duration
}

// GetRequeueAfter returns the interval, for the Flux runtime.
func (in *TrustAnchor) GetRequeueAfter() time.Duration { return in.GetInterval() }

// GetSourceKey returns the key to lift, ca.crt by default.
func (in *TrustAnchor) GetSourceKey() string {
	if in.Spec.Source.Key == "" {
		return DefaultSourceKey
	}
	return in.Spec.Source.Key
}

// GetOwnerKind returns what the projection is owned by, the HelmRelease by default.
func (in *TrustAnchor) GetOwnerKind() OwnerKind {
	if in.Spec.Owner == nil || in.Spec.Owner.Kind == "" {
		return OwnerHelmRelease
	}
	return in.Spec.Owner.Kind
}

// ProjectionName returns the name of the projected Secret.
func (in *TrustAnchor) ProjectionName() string { return ProjectionName(in.Spec.Release) }

// ProjectionName is the name of release's projection: <release>.tenant-ca.
func ProjectionName(release string) string { return release + ProjectionSuffix }

// +kubebuilder:object:root=true

// TrustAnchorList is a list of TrustAnchors.
type TrustAnchorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrustAnchor `json:"items"`
}
