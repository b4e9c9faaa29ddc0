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
// selects it (TrustSource and AccountSource alike), its chart name (from
// spec.chart or the source spec.chartRef names), and the
// owner reference every object credo makes for it carries.
package release

import (
	"context"
	"fmt"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
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

// BindSourceNamespaces binds --platform-source-namespaces, which the
// trust- and credential-controller share, to v (Rule.SourceNamespaces)
// with its default:
//
//	--platform-source-namespaces=cozy-system,cozy-public,flux-system
func BindSourceNamespaces(fs *pflag.FlagSet, v *[]string) {
	fs.StringSliceVar(v, "platform-source-namespaces", []string{"cozy-system", "cozy-public", "flux-system"},
		"The namespaces, where no tenant may create or edit Flux sources, in which a TrustSource's or AccountSource's "+
			"spec.chartRef without a namespace looks for its source; a source of that name in any other namespace (a tenant's own) does not match.")
}

// Rule is what a rule kind selects releases by. A rule with none of a
// chart, a chartRef or a release selector selects nothing.
type Rule struct {
	// Chart, when set, selects the releases of that chart (ChartName).
	Chart string
	// ChartRef, when set, selects the releases whose spec.chartRef names
	// that source. Without a namespace, the source must be in one of
	// SourceNamespaces.
	ChartRef *releasev1.ChartRef
	// SourceNamespaces are the platform's source namespaces, in which no
	// tenant writes sources (the controllers' --platform-source-namespaces):
	// where a ChartRef without a namespace looks for its source. A source
	// of that name in any other namespace, such as a tenant's own, does
	// not match it; with none, such a ChartRef selects no release.
	SourceNamespaces []string
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
// its namespace, needed only with a namespace selector. c reads the source
// a chartRef names, only when the rule has a chart and every other part of
// it matches. An unparsable selector is an error naming it; a chart that
// cannot be resolved is an *UnresolvedError.
func (r Rule) Selects(ctx context.Context, c client.Reader, hr *helmv2.HelmRelease, nsLabels labels.Set) (bool, error) {
	rel, ns, err := r.selectors()
	if err != nil {
		return false, err
	}
	switch {
	case r.Chart == "" && r.ChartRef == nil && r.ReleaseSelector == nil:
		return false, nil
	case rel != nil && !rel.Matches(labels.Set(hr.Labels)):
		return false, nil
	case ns != nil && !ns.Matches(nsLabels):
		return false, nil
	case r.ChartRef != nil && !r.namesChartRef(hr):
		return false, nil
	case r.Chart == "":
		return true, nil
	}
	chart, err := ChartName(ctx, c, hr)
	if err != nil {
		return false, err
	}
	return chart == r.Chart, nil
}

// namesChartRef reports whether hr's chartRef names the rule's ChartRef:
// in its namespace, or without one, in one of SourceNamespaces. A release
// chooses its chartRef, cross-namespace references included: one that
// names the platform's source counts, one that names a source of its own
// namespace does not.
func (r Rule) namesChartRef(hr *helmv2.HelmRelease) bool {
	if r.ChartRef.Namespace != "" {
		return namesSource(hr, r.ChartRef.Kind, r.ChartRef.Name, r.ChartRef.Namespace)
	}
	return hr.Spec.ChartRef != nil && slices.ContainsFunc(r.SourceNamespaces, func(ns string) bool {
		return namesSource(hr, r.ChartRef.Kind, r.ChartRef.Name, ns)
	})
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

// NoMatchHint says what a rule that selects no release asks of one, and
// how releases of the platform's shape (spec.chartRef, application labels)
// are selected.
func NoMatchHint(r Rule) string {
	var wants []string
	var hint string
	if r.Chart != "" {
		wants = append(wants, fmt.Sprintf("chart %q", r.Chart))
	}
	if r.ChartRef != nil {
		ns := r.ChartRef.Namespace
		if ns == "" {
			ns = "{" + strings.Join(r.SourceNamespaces, ",") + "}"
		}
		wants = append(wants, fmt.Sprintf("chartRef %s %s/%s", r.ChartRef.Kind, ns, r.ChartRef.Name))
		if r.ChartRef.Namespace == "" {
			hint = "; a chartRef without a namespace names a source in the platform's source namespaces (--platform-source-namespaces) only"
		}
	}
	if r.ReleaseSelector != nil {
		wants = append(wants, "releaseSelector "+metav1.FormatLabelSelector(r.ReleaseSelector))
	}
	if r.NamespaceSelector != nil {
		wants = append(wants, "namespaceSelector "+metav1.FormatLabelSelector(r.NamespaceSelector))
	}
	return fmt.Sprintf("no HelmRelease has %s (a release with spec.chartRef has the chart name of the source it names; "+
		"releases can also be selected by their labels, e.g. apps.cozystack.io/application.kind%s)", strings.Join(wants, " and "), hint)
}
