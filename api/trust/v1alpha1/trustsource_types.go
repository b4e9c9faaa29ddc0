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
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
)

const (
	// TrustSourceKind is the kind of a TrustSource.
	TrustSourceKind = "TrustSource"

	// ReleasePlaceholder is replaced by the release name in SecretName.
	ReleasePlaceholder = "{release}"
)

// TrustSourceSpec is a rule of the name leg: for the HelmReleases it
// selects, the CA certificate is in a Secret named after the release.
// +kubebuilder:validation:XValidation:rule="has(self.releaseSelector) || has(self.chart) || has(self.chartRef)",message="one of releaseSelector, chart or chartRef is required"
type TrustSourceSpec struct {
	// releaseSelector selects HelmReleases by label. When Chart is also set,
	// a release must match both.
	// The operators and the presence of values are checked at admission;
	// a key or value that is not label syntax makes the TrustSource
	// Stalled with InvalidSelector.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="the operator of a matchExpression must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn'] ? has(e.values) && size(e.values) > 0 : !has(e.values) || size(e.values) == 0)",message="In and NotIn need values; Exists and DoesNotExist take none"
	// +optional
	ReleaseSelector *metav1.LabelSelector `json:"releaseSelector,omitempty"`

	// chart selects HelmReleases by chart name: spec.chart.spec.chart, or for
	// a release with spec.chartRef, the chart name of the source it names
	// (a HelmChart's spec.chart, the last path element of an OCIRepository's
	// URL, an ExternalArtifact's name). The chart name is chosen by whoever
	// writes the release (a tenant may): selecting by it is no trust
	// boundary. A release whose chartRef names a source that cannot be read
	// keeps what the rule made for it and is told by a Warning event
	// (ChartUnresolved); the rule counts it in ReleasesNotApplied.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Chart string `json:"chart,omitempty"`

	// chartRef selects HelmReleases whose spec.chartRef names this source.
	// With chart or releaseSelector also set, a release must match all.
	// +optional
	ChartRef *releasev1.ChartRef `json:"chartRef,omitempty"`

	// namespaceSelector limits the rule to namespaces with matching labels;
	// empty selects every namespace the controller serves.
	// Checked as ReleaseSelector is.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="the operator of a matchExpression must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn'] ? has(e.values) && size(e.values) > 0 : !has(e.values) || size(e.values) == 0)",message="In and NotIn need values; Exists and DoesNotExist take none"
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// secretName is the source Secret's name as a template of the release
	// name, which replaces {release}: "{release}-ca" for CloudNativePG,
	// "{release}-ca-cert" for Percona PSMDB. It must contain {release} (a
	// template without it would name one Secret for every release), and
	// with {release} replaced by a release name it must be a Secret name:
	// lower-case alphanumerics, '-' and '.', in the shape of a DNS subdomain.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.contains('{release}')",message="secretName must contain {release}"
	// +kubebuilder:validation:XValidation:rule="self.replace('{release}', 'r').matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="secretName must be a Secret name (lower-case alphanumerics, '-' and '.', starting and ending with an alphanumeric) once {release} is replaced; {release} is the only placeholder"
	// +required
	SecretName string `json:"secretName"`

	// key whose value is lifted. Defaults to ca.crt.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:default="ca.crt"
	// +optional
	Key string `json:"key,omitempty"`

	// sourceWriters names the identities that may write the rule's source
	// Secrets: create a Secret with a name the rule's secretName gives a
	// release, or change its data or type, in the namespaces the rule
	// applies to. The cluster's administrators (group system:masters) and
	// the ServiceAccounts of kube-system always may. When unset, so may
	// every ServiceAccount of a namespace other than the Secret's (an
	// operator running in its own namespace), which includes controllers
	// that write on a tenant's behalf, such as Flux's helm-controller and
	// kustomize-controller: name the engine's operator here to exclude them.
	// When set, of all the others only the users and groups named here may
	// (naming a ServiceAccount of the Secret's own namespace admits whoever
	// may run pods there, edit users included). Enforced at admission by the
	// ValidatingAdmissionPolicy credo-trust-source-names (config/admission),
	// not by the controller.
	// +optional
	SourceWriters *SourceWriters `json:"sourceWriters,omitempty"`

	// suspend stops the rule from creating new TrustAnchors. The anchors it
	// created keep their source and stay projected.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// SourceWriters names who may write a rule's source Secrets, as
// kube-apiserver authenticates them.
// +kubebuilder:validation:XValidation:rule="has(self.users) || has(self.groups)",message="sourceWriters must name at least one user or group"
type SourceWriters struct {
	// users are user names: a ServiceAccount is
	// system:serviceaccount:<namespace>:<name>.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	Users []string `json:"users,omitempty"`

	// groups are group names: every ServiceAccount of a namespace is
	// system:serviceaccounts:<namespace>.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// TrustSourceStatus reports what the rule matched.
type TrustSourceStatus struct {
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions holds Ready.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// matchedReleases is the number of HelmReleases the rule matches.
	// +kubebuilder:default=0
	// +optional
	MatchedReleases int32 `json:"matchedReleases"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ts,categories=credo-all;trust
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.spec.chart`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.secretName`
// +kubebuilder:printcolumn:name="Releases",type=integer,JSONPath=`.status.matchedReleases`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.key`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// TrustSource is a cluster-wide rule of the name leg: where the CA of the
// releases of one engine lives. Adding an engine is a new TrustSource.
type TrustSource struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is a rule of the name leg: for the HelmReleases it
	// selects, the CA certificate is in a Secret named after the release.
	// +required
	Spec TrustSourceSpec `json:"spec"`

	// status reports what the rule matched.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status TrustSourceStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *TrustSource) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *TrustSource) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetKey returns the key to lift, ca.crt by default.
func (in *TrustSource) GetKey() string {
	if in.Spec.Key == "" {
		return DefaultSourceKey
	}
	return in.Spec.Key
}

// SecretNameFor returns the source Secret's name for a release.
func (in *TrustSource) SecretNameFor(release string) string {
	return strings.ReplaceAll(in.Spec.SecretName, ReleasePlaceholder, release)
}

// +kubebuilder:object:root=true

// TrustSourceList is a list of TrustSources.
type TrustSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrustSource `json:"items"`
}
