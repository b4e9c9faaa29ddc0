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

// Package v1alpha1 holds the types the rule kinds of every credo API group
// (TrustSource, AccountSource) select Flux HelmReleases by.
// +kubebuilder:object:generate=true
package v1alpha1

// The kinds of source a HelmRelease's spec.chartRef can name.
const (
	// OCIRepositoryKind is source-controller's OCIRepository: the chart is
	// the artifact at its URL, whose last path element is the chart name.
	OCIRepositoryKind = "OCIRepository"
	// HelmChartKind is source-controller's HelmChart: spec.chart is the
	// chart name.
	HelmChartKind = "HelmChart"
	// ExternalArtifactKind is an ExternalArtifact, produced by a controller
	// other than source-controller: its name is taken as the chart name.
	ExternalArtifactKind = "ExternalArtifact"
)

// ChartRef selects HelmReleases by the source their spec.chartRef names.
type ChartRef struct {
	// kind is the kind of the source: OCIRepository, HelmChart or
	// ExternalArtifact.
	// +kubebuilder:validation:Enum=OCIRepository;HelmChart;ExternalArtifact
	// +required
	Kind string `json:"kind"`

	// name is the name of the source.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// namespace is the namespace of the source; a release's chartRef
	// without a namespace names a source in the release's own namespace.
	// Empty matches the source only in one of the platform's source
	// namespaces (the controller's --platform-source-namespaces), never in
	// a namespace where a tenant may write sources of its own.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Reasons of a rule kind's Ready condition about the releases it selects.
const (
	// NoReleasesMatchedReason (Ready=False): the rule selects no release.
	// It is not an error (the releases may come), but not Ready either: a
	// rule that matches nothing is most often a rule that is wrong.
	NoReleasesMatchedReason string = "NoReleasesMatched"
	// ChartUnresolvedReason (ReleasesNotApplied=True, and a Warning event
	// on the HelmRelease): the chart name of a release the rule may select
	// cannot be resolved, because its spec.chartRef names a source that
	// cannot be read (or a kind credo cannot resolve). It never makes the
	// rule not Ready: any tenant can cause it for its own release.
	ChartUnresolvedReason string = "ChartUnresolved"
)

// ReleasesNotAppliedCondition is of negative polarity and does not affect
// Ready: True while the rule could not be applied in full to some releases
// it selects or may select, for reasons that lie with those releases
// (their chart source, their values, their names) or with a limit of the
// controller. Each such release is told why by a Warning event on its
// HelmRelease; the condition's reason is the first by precedence of the
// kind, and its message counts the releases by reason and names none: a
// cluster-scoped rule's status holds no tenant's text, and no tenant can
// make a rule not Ready.
const ReleasesNotAppliedCondition string = "ReleasesNotApplied"
