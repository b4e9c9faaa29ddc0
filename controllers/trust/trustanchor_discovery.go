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
	"sort"
	"strings"

	"github.com/credo-dev/credo/internal/release"
	"github.com/credo-dev/credo/internal/sourcecache"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// candidate is one claim of a source for a release.
type candidate struct {
	leg trustv1.Leg
	// trustSource names the TrustSource, or the TenantProjection, of the
	// claim on those legs.
	trustSource string
	source      trustv1.SecretKeySource
	// suspended marks the claim of a suspended TrustSource: it keeps the
	// anchors it made, but makes no new one.
	suspended bool
	// unresolved marks a TrustSource that may select the release but cannot
	// tell (the chart of its chartRef cannot be resolved): it keeps
	// claiming, on the rule's own source, the anchor it made, and makes no
	// new one.
	unresolved bool
}

// discoveredBy is the value of the DiscoveredByAnnotation for the candidate.
func (c candidate) discoveredBy() string {
	switch c.leg {
	case trustv1.LegLabel:
		return "label"
	case trustv1.LegTenantProjection:
		return tenantProjectionPrefix + c.trustSource
	}
	return trustSourcePrefix + c.trustSource
}

func (c candidate) String() string {
	switch c.leg {
	case trustv1.LegLabel:
		return fmt.Sprintf("Secret %s key %s (label)", c.source.Name, c.source.Key)
	case trustv1.LegDeclared:
		return fmt.Sprintf("Secret %s key %s (declared TrustAnchor)", c.source.Name, c.source.Key)
	case trustv1.LegTenantProjection:
		return fmt.Sprintf("Secret %s key %s (TenantProjection %s)", c.source.Name, c.source.Key, c.trustSource)
	}
	return fmt.Sprintf("Secret %s key %s (TrustSource %s)", c.source.Name, c.source.Key, c.trustSource)
}

// Prefixes of the DiscoveredByAnnotation's value, before a name.
const (
	trustSourcePrefix      = "trustsource/"
	tenantProjectionPrefix = "tenantprojection/"
)

// legOf tells from the annotation how a TrustAnchor came to exist, and the
// TrustSource or TenantProjection that made it.
func legOf(ta *trustv1.TrustAnchor) (trustv1.Leg, string) {
	v, ok := ta.Annotations[trustv1.DiscoveredByAnnotation]
	if v == "label" {
		return trustv1.LegLabel, ""
	}
	if name, found := strings.CutPrefix(v, trustSourcePrefix); ok && found && name != "" {
		return trustv1.LegTrustSource, name
	}
	if name, found := strings.CutPrefix(v, tenantProjectionPrefix); ok && found && name != "" {
		return trustv1.LegTenantProjection, name
	}
	return trustv1.LegDeclared, ""
}

// ruleProblem is what a TrustSource that selects, or may select, a release
// cannot do for it: told to the release, never in the rule's status.
type ruleProblem struct {
	reason, message string
}

// discover returns the claims of the discovery legs on a release: the
// platform's TenantProjections first (the chart's own word), then the label
// leg, then TrustSources by name; claims of the same Secret and key are
// one. problems are what rules could not decide or claim for the release.
func (r *TrustAnchorReconciler) discover(ctx context.Context, namespace, release string, hr *helmv2.HelmRelease, ns *namespaceLabels) (_ []candidate, problems []ruleProblem, _ error) {
	out, err := r.sentinelClaims(ctx, namespace, release)
	if err != nil {
		return nil, nil, err
	}
	var labels []candidate
	labelled, err := r.labelledSources(ctx, namespace, release)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range labelled {
		key := s.Annotations[r.Keys.Key]
		if key == "" {
			key = trustv1.DefaultSourceKey
		}
		labels = append(labels, candidate{leg: trustv1.LegLabel, source: trustv1.SecretKeySource{Name: s.Name, Key: key}})
	}
	sort.Slice(labels, func(i, j int) bool { return labels[i].source.Name < labels[j].source.Name })
	out = append(out, labels...)

	if hr != nil {
		rules, err := r.matchingTrustSources(ctx, hr, ns)
		if err != nil {
			return nil, nil, err
		}
		var unresolved []string
		var chartErr error
		for _, ts := range rules {
			if ts.unresolved != nil {
				unresolved = append(unresolved, ts.Name)
				chartErr = fmt.Errorf("the chart of chartRef %s cannot be resolved: %w", ts.unresolved.Ref, ts.unresolved.Err)
			}
			name, ok := sourceNameFor(&ts.TrustSource, hr.Name)
			if !ok {
				// A rule that names no Secret for the release claims
				// nothing for it; the release is told (a template that
				// names none for any release stalls the rule instead).
				if secretNameTemplateError(&ts.TrustSource) == "" {
					problems = append(problems, ruleProblem{trustv1.InvalidSecretNameReason, fmt.Sprintf(
						"TrustSource %s names the source Secret %s for this release, which is not a Secret name (%s): "+
							"it claims nothing for the release; a shorter release name fits",
						ts.Name, shortened(ts.SecretNameFor(hr.Name)), strings.Join(validation.IsDNS1123Subdomain(ts.SecretNameFor(hr.Name)), "; "))})
				}
				continue
			}
			out = append(out, candidate{
				leg: trustv1.LegTrustSource, trustSource: ts.Name, suspended: ts.Spec.Suspend, unresolved: ts.unresolved != nil,
				source: trustv1.SecretKeySource{Name: name, Key: ts.GetKey()},
			})
		}
		if len(unresolved) > 0 {
			problems = append(problems, ruleProblem{trustv1.ChartUnresolvedReason, fmt.Sprintf(
				"%v; TrustSource %s cannot tell whether it applies to this release, "+
					"and keeps what it made for it as it is until the source can be read",
				chartErr, strings.Join(unresolved, ", "))})
		}
	}
	return dedupe(out), problems, nil
}

// shortened is a name for a message: at most 64 characters.
func shortened(name string) string {
	if len(name) > 64 {
		return name[:64] + "..."
	}
	return name
}

// labelledSources lists the Secrets whose publish label names the release:
// from the cache of label-leg sources when there is one, since its events
// alone reconcile a labelled Secret (a reconcile such an event starts must
// find the Secret it is about), else from the manager's metadata cache.
func (r *TrustAnchorReconciler) labelledSources(ctx context.Context, namespace, release string) ([]metav1.ObjectMeta, error) {
	opts := []client.ListOption{client.InNamespace(namespace), client.MatchingLabels{
		r.Keys.PublishCACert: "true",
		r.Keys.Release:       release,
	}}
	var out []metav1.ObjectMeta
	if r.Sources != nil {
		var secrets corev1.SecretList
		// The release's sources alone (sourcecache.ReleaseIndex), not
		// every source of the namespace.
		if err := r.Sources.List(ctx, &secrets, append(opts, client.MatchingFields{sourcecache.ReleaseIndex: release})...); err != nil {
			return nil, fmt.Errorf("listing labelled Secrets: %w", err)
		}
		for _, s := range secrets.Items {
			out = append(out, s.ObjectMeta)
		}
		return out, nil
	}
	var secrets metav1.PartialObjectMetadataList
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.Client.List(ctx, &secrets, opts...); err != nil {
		return nil, fmt.Errorf("listing labelled Secrets: %w", err)
	}
	for _, s := range secrets.Items {
		out = append(out, s.ObjectMeta)
	}
	return out, nil
}

// firstActive returns the first claim that may create a TrustAnchor.
func firstActive(cands []candidate) (candidate, bool) {
	for _, c := range cands {
		if !c.suspended && !c.unresolved {
			return c, true
		}
	}
	return candidate{}, false
}

// dedupe keeps the first claim of each source; an unresolved claim is
// kept aside (resolve settles it) and hides no other.
func dedupe(in []candidate) []candidate {
	seen := map[trustv1.SecretKeySource]bool{}
	var out []candidate
	for _, c := range in {
		if c.unresolved {
			out = append(out, c)
			continue
		}
		if !seen[c.source] {
			seen[c.source] = true
			out = append(out, c)
		}
	}
	return out
}

// resolve settles the unresolved claims on the release of ta: the rule
// that made ta keeps claiming its own source (the Secret it names does not
// depend on the chart), so the projection keeps following it, until its
// chart can be resolved; any other unresolved rule claims nothing yet.
func resolve(ta *trustv1.TrustAnchor, cands []candidate) []candidate {
	leg, ts := legOf(ta)
	out := make([]candidate, 0, len(cands))
	for _, c := range cands {
		switch {
		case !c.unresolved:
			out = append(out, c)
		case leg == trustv1.LegTrustSource && ts == c.trustSource:
			c.unresolved = false
			out = append(out, c)
		}
	}
	return dedupe(out)
}

// matched is a TrustSource that selects a release, or may (unresolved:
// why the release's chart cannot be resolved).
type matched struct {
	trustv1.TrustSource
	unresolved *release.UnresolvedError
}

// matchingTrustSources returns the TrustSources that select hr, or may,
// sorted by name. Suspended ones are included: their claims stand.
func (r *TrustAnchorReconciler) matchingTrustSources(ctx context.Context, hr *helmv2.HelmRelease, ns *namespaceLabels) ([]matched, error) {
	var list trustv1.TrustSourceList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing TrustSources: %w", err)
	}
	var nsLabels labels.Set
	var out []matched
	for _, ts := range list.Items {
		if ts.Spec.NamespaceSelector != nil && nsLabels == nil {
			var err error
			if nsLabels, err = ns.get(ctx, r.Client); err != nil {
				return nil, err
			}
		}
		ok, err := ruleOf(&ts, r.SourceNamespaces).Selects(ctx, r.Client, hr, nsLabels)
		var unresolved *release.UnresolvedError
		switch {
		case errors.As(err, &unresolved):
			// Whether the rule selects the release is not known until its
			// chart source can be read (the release is told, and the
			// source's watch requeues it): see candidate.unresolved.
			out = append(out, matched{TrustSource: ts, unresolved: unresolved})
		case err != nil:
			// A bad selector is the TrustSource's problem, reported on it.
			continue
		case ok:
			out = append(out, matched{TrustSource: ts})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ruleOf is what the TrustSource selects releases by; sourceNamespaces
// are the platform's source namespaces, where a chartRef without a
// namespace looks (--platform-source-namespaces).
func ruleOf(ts *trustv1.TrustSource, sourceNamespaces []string) release.Rule {
	return release.Rule{Chart: ts.Spec.Chart, ChartRef: ts.Spec.ChartRef, ReleaseSelector: ts.Spec.ReleaseSelector,
		NamespaceSelector: ts.Spec.NamespaceSelector, SourceNamespaces: sourceNamespaces}
}

// namespaceLabels are the labels of one namespace, read from the metadata
// cache at most once per reconcile, when first needed.
type namespaceLabels struct {
	name string
	set  labels.Set
	err  error
	read bool
}

// get returns the labels, reading them on the first call.
func (n *namespaceLabels) get(ctx context.Context, c client.Reader) (labels.Set, error) {
	if !n.read {
		n.read = true
		n.set, n.err = readNamespaceLabels(ctx, c, n.name)
	}
	return n.set, n.err
}

// readNamespaceLabels reads a namespace's labels from the metadata cache.
func readNamespaceLabels(ctx context.Context, c client.Reader, name string) (labels.Set, error) {
	var ns metav1.PartialObjectMetadata
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return labels.Set(ns.Labels), nil
}
