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

// Package release holds what credo knows of a Flux HelmRelease: which rule
// selects it (TrustSource and AccountSource alike), its chart, and the
// owner reference every object credo makes for it carries.
package release

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// OwnerReference is the reference to hr that every object credo makes for
// a release carries, so that garbage collection removes it with the
// release. It does not block the release's deletion.
func OwnerReference(hr *helmv2.HelmRelease) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         helmv2.GroupVersion.String(),
		Kind:               helmv2.HelmReleaseKind,
		Name:               hr.Name,
		UID:                hr.UID,
		BlockOwnerDeletion: ptr.To(false),
	}
}

// Chart is the name of the chart hr installs from a chart template
// (spec.chart.spec.chart); empty when it has none.
func Chart(hr *helmv2.HelmRelease) string {
	if hr.Spec.Chart == nil {
		return ""
	}
	return hr.Spec.Chart.Spec.Chart
}

// Rule is what a rule kind selects releases by. A rule with neither a
// chart nor a release selector selects nothing.
type Rule struct {
	// Chart, when set, selects the releases of that chart.
	Chart string
	// ReleaseSelector, when set, selects releases by their labels.
	ReleaseSelector *metav1.LabelSelector
	// NamespaceSelector, when set, narrows to releases whose namespace's
	// labels match.
	NamespaceSelector *metav1.LabelSelector
}

// Validate parses the rule's selectors, whether or not any release would
// reach them.
func (r Rule) Validate() error {
	_, _, err := r.selectors()
	return err
}

// Selects reports whether the rule selects hr; nsLabels are the labels of
// its namespace, needed only with a namespace selector. An unparsable
// selector is an error naming it.
func (r Rule) Selects(hr *helmv2.HelmRelease, nsLabels labels.Set) (bool, error) {
	rel, ns, err := r.selectors()
	if err != nil {
		return false, err
	}
	if r.Chart != "" && Chart(hr) != r.Chart {
		return false, nil
	}
	if rel != nil && !rel.Matches(labels.Set(hr.Labels)) {
		return false, nil
	}
	if ns != nil && !ns.Matches(nsLabels) {
		return false, nil
	}
	return r.Chart != "" || r.ReleaseSelector != nil, nil
}

func (r Rule) selectors() (rel, ns labels.Selector, err error) {
	if r.ReleaseSelector != nil {
		if rel, err = metav1.LabelSelectorAsSelector(r.ReleaseSelector); err != nil {
			return nil, nil, fmt.Errorf("releaseSelector: %w", err)
		}
	}
	if r.NamespaceSelector != nil {
		if ns, err = metav1.LabelSelectorAsSelector(r.NamespaceSelector); err != nil {
			return nil, nil, fmt.Errorf("namespaceSelector: %w", err)
		}
	}
	return rel, ns, nil
}
