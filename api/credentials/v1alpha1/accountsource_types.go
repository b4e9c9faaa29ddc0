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
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
)

const (
	// AccountSourceKind is the kind of an AccountSource.
	AccountSourceKind = "AccountSource"

	// UsernamePlaceholder is replaced by the username in a valuesFrom target path template.
	UsernamePlaceholder = "{username}"
	// ReleasePlaceholder is replaced by the release's name in a plaintext
	// secretRef name template.
	ReleasePlaceholder = "{release}"

	// SourceLabel names the AccountSource a generated CredentialAccount came from.
	SourceLabel = "credentials.credo.dev/source"
	// ReleaseLabel names the release of a generated CredentialAccount.
	ReleaseLabel = "credentials.credo.dev/release"
	// PlatformValuesLabel ("true") marks a HelmRelease that delivers a
	// platform account's verifier through spec.valuesFrom. The
	// credential-controller sets it; the credo-platform-releases admission
	// policy admits a change of such a release's valuesFrom,
	// postRenderers, chart or status, or of this label, only from the
	// platform's identities.
	PlatformValuesLabel = "credentials.credo.dev/platform-values"
)

// SourceKind says how an entry derives usernames from a release.
// +kubebuilder:validation:Enum=ValuesMap;Static;Webhook
type SourceKind string

const (
	// SourceValuesMap: one account per key of a map in the HelmRelease's spec.values.
	SourceValuesMap SourceKind = "ValuesMap"
	// SourceStatic: one fixed account per release.
	SourceStatic SourceKind = "Static"
	// SourceWebhook: usernames from an external webhook. Not built yet: refused.
	SourceWebhook SourceKind = "Webhook"
)

// AccountSourceEntry derives accounts from a release.
// +kubebuilder:validation:XValidation:rule="self.kind != 'ValuesMap' || has(self.valuesMap)",message="valuesMap is required for kind ValuesMap"
// +kubebuilder:validation:XValidation:rule="self.kind != 'Static' || has(self.static)",message="static is required for kind Static"
// +kubebuilder:validation:XValidation:rule="self.kind != 'Webhook' || has(self.webhook)",message="webhook is required for kind Webhook"
type AccountSourceEntry struct {
	// kind says how usernames are derived.
	// +required
	Kind SourceKind `json:"kind"`

	// valuesMap makes one account per key of the map at path in spec.values.
	// +optional
	ValuesMap *ValuesMapSource `json:"valuesMap,omitempty"`

	// static makes one fixed account.
	// +optional
	Static *StaticSource `json:"static,omitempty"`

	// webhook asks an external service for the usernames, for kind
	// Webhook. Part of the API, not built yet: a source using it is
	// refused (UnsupportedSourceKind).
	// +optional
	Webhook *WebhookSource `json:"webhook,omitempty"`

	// template is the rest of every derived account's spec.
	// +required
	Template AccountTemplate `json:"template"`
}

// ValuesMapSource names a map in a HelmRelease's spec.values.
type ValuesMapSource struct {
	// path is the dot-separated path of the map, e.g. "users".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=250
	// +required
	Path string `json:"path"`
}

// StaticSource is a fixed account.
type StaticSource struct {
	// username of the account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	Username string `json:"username"`
}

// AccountTemplate is the spec of a derived account, besides release and username.
// +kubebuilder:validation:XValidation:rule="!has(self.plaintext) || (has(self.owner) && self.owner == 'platform' && self.format.name == 'plaintext')",message="plaintext is for a platform account of format plaintext"
type AccountTemplate struct {
	// format of the account.
	// +required
	Format Format `json:"format"`

	// owner of the account. Defaults to tenant.
	// +kubebuilder:default=tenant
	// +optional
	Owner AccountOwner `json:"owner,omitempty"`

	// secretLabels for the engine's operator.
	// Credo's contract labels are refused: on a Secret credo writes
	// they would read as credo's own statement.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.endsWith('/publish-ca-cert') && !k.endsWith('/publish-ca-cert-release') && !k.endsWith('/tenant-ca') && !k.endsWith('/account'))",message="secretLabels may not carry credo's contract labels (publish-ca-cert, publish-ca-cert-release, tenant-ca, account): credo would write them as its own"
	// +optional
	SecretLabels map[string]string `json:"secretLabels,omitempty"`

	// valuesFrom delivers the password through the release's valuesFrom;
	// {username} in TargetPath is replaced by the username.
	// +optional
	ValuesFrom *ValuesFromTarget `json:"valuesFrom,omitempty"`

	// plaintext is every derived account's spec.plaintext, required for a
	// platform account of format plaintext (MariaDB's root); {release} in
	// its secretRef's name is replaced by the release's name.
	// +optional
	Plaintext *PlaintextTemplate `json:"plaintext,omitempty"`
}

// PlaintextTemplate is spec.plaintext of a derived account.
type PlaintextTemplate struct {
	// consumers are the ServiceAccounts that read the plaintext through the
	// API.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Consumers []ServiceAccountRef `json:"consumers,omitempty"`

	// secretRef names the key a running consumer already reads, e.g.
	// {name: "{release}-credentials", key: root} for MariaDBs the chart
	// rendered before credo.
	// +optional
	SecretRef *SecretKeyRefTemplate `json:"secretRef,omitempty"`
}

// SecretKeyRefTemplate is a SecretKeyRef whose name may hold {release}.
type SecretKeyRefTemplate struct {
	// name of the Secret; {release} is replaced by the release's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([-.a-z0-9]|\{release\})+$`
	// +required
	Name string `json:"name"`

	// key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key"`
}

// AccountSourceSpec selects releases and derives their accounts.
// +kubebuilder:validation:XValidation:rule="has(self.releaseSelector) || has(self.chart) || has(self.chartRef)",message="one of releaseSelector, chart or chartRef is required"
type AccountSourceSpec struct {
	// releaseSelector selects HelmReleases by label.
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

	// sources derive the accounts of each selected release.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	Sources []AccountSourceEntry `json:"sources"`

	// suspend stops accounts from being created or deleted.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// AccountSourceStatus reports what the source derived.
type AccountSourceStatus struct {
	// observedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions holds Ready and Stalled.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// matchedReleases is the number of HelmReleases selected.
	// +kubebuilder:default=0
	// +optional
	MatchedReleases int32 `json:"matchedReleases"`

	// accounts is the number of CredentialAccounts derived.
	// +kubebuilder:default=0
	// +optional
	Accounts int32 `json:"accounts"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=asrc,categories=credo-all;credentials
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.spec.chart`
// +kubebuilder:printcolumn:name="Releases",type=integer,JSONPath=`.status.matchedReleases`
// +kubebuilder:printcolumn:name="Accounts",type=integer,JSONPath=`.status.accounts`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// AccountSource says, once per application kind, which accounts its
// releases have: it generates their CredentialAccounts, adding and removing
// them as the releases' values change.
type AccountSource struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec selects releases and derives their accounts.
	// +required
	Spec AccountSourceSpec `json:"spec"`

	// status reports what the source derived.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status AccountSourceStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *AccountSource) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions.
func (in *AccountSource) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// +kubebuilder:object:root=true

// AccountSourceList is a list of AccountSources.
type AccountSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccountSource `json:"items"`
}
