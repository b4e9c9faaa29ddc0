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

package release

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	releasev1 "github.com/credo-dev/credo/api/release/v1alpha1"
)

// WatchChartSources adds to b a watch of the source kinds a chartRef's
// chart name is read from (HelmChart, OCIRepository): a change of a
// source's spec can change the chart name of the releases whose chartRef
// names it, which toRequests maps to what to reconcile. A source no
// release's chartRef names (such as the HelmChart helm-controller makes for
// every release with a chart template) maps to nothing. c reads the
// releases (see Referring).
func WatchChartSources(b *builder.Builder, c client.Reader,
	toRequests func(ctx context.Context, releases []client.ObjectKey) []reconcile.Request) *builder.Builder {
	mapSource := func(ctx context.Context, o client.Object) []reconcile.Request {
		keys, err := Referring(ctx, c, o)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the releases of a chart source", "source", client.ObjectKeyFromObject(o))
			return nil
		}
		if len(keys) == 0 {
			return nil
		}
		return toRequests(ctx, keys)
	}
	for _, src := range []client.Object{&sourcev1.HelmChart{}, &sourcev1.OCIRepository{}} {
		b = b.Watches(src, handler.EnqueueRequestsFromMapFunc(mapSource), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b
}

// UnresolvedError is a release whose spec.chartRef names a source whose
// chart name cannot be read.
type UnresolvedError struct {
	// Release is the HelmRelease.
	Release client.ObjectKey
	// Ref is the chartRef, as kind namespace/name.
	Ref string
	Err error
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("HelmRelease %s: the chart of chartRef %s cannot be resolved: %v", e.Release, e.Ref, e.Err)
}

func (e *UnresolvedError) Unwrap() error { return e.Err }

// chartRefNamespace is the namespace of the source hr's chartRef names.
func chartRefNamespace(hr *helmv2.HelmRelease) string {
	if hr.Spec.ChartRef.Namespace != "" {
		return hr.Spec.ChartRef.Namespace
	}
	return hr.Namespace
}

// namesSource reports whether hr's chartRef names the source of kind and
// name in namespace.
func namesSource(hr *helmv2.HelmRelease, kind, name, namespace string) bool {
	ref := hr.Spec.ChartRef
	return ref != nil && ref.Kind == kind && ref.Name == name && chartRefNamespace(hr) == namespace
}

// ChartName is the name of the chart hr installs: spec.chart.spec.chart;
// for a spec.chartRef, a HelmChart's spec.chart, the last path element of
// an OCIRepository's URL (without tag or digest), or an ExternalArtifact's
// name as it is. r reads the source (from the cache in a controller). A
// source that cannot be read, or a kind credo does not know, is an
// *UnresolvedError. A release with neither has no chart name.
func ChartName(ctx context.Context, r client.Reader, hr *helmv2.HelmRelease) (string, error) {
	switch {
	case hr.Spec.Chart != nil:
		return hr.Spec.Chart.Spec.Chart, nil
	case hr.Spec.ChartRef == nil:
		return "", nil
	}
	ref := hr.Spec.ChartRef
	key := client.ObjectKey{Namespace: chartRefNamespace(hr), Name: ref.Name}
	unresolved := func(err error) error {
		return &UnresolvedError{Release: client.ObjectKeyFromObject(hr), Ref: ref.Kind + " " + key.String(), Err: err}
	}
	switch ref.Kind {
	case releasev1.ExternalArtifactKind:
		return ref.Name, nil
	case releasev1.HelmChartKind:
		var hc sourcev1.HelmChart
		if err := r.Get(ctx, key, &hc); err != nil {
			return "", unresolved(err)
		}
		return hc.Spec.Chart, nil
	case releasev1.OCIRepositoryKind:
		var repo sourcev1.OCIRepository
		if err := r.Get(ctx, key, &repo); err != nil {
			return "", unresolved(err)
		}
		if name := ociChartName(repo.Spec.URL); name != "" {
			return name, nil
		}
		return "", unresolved(fmt.Errorf("its URL %q has no path", repo.Spec.URL))
	}
	return "", unresolved(fmt.Errorf("kind %q is not one of %s, %s, %s",
		ref.Kind, releasev1.OCIRepositoryKind, releasev1.HelmChartKind, releasev1.ExternalArtifactKind))
}

// ociChartName is the last path element of an OCI URL, without a tag or
// digest: oci://ghcr.io/org/charts/postgres:1.2 is postgres.
func ociChartName(url string) string {
	rest, ok := strings.CutPrefix(url, "oci://")
	if !ok {
		return ""
	}
	host, path, ok := strings.Cut(rest, "/")
	if !ok || host == "" || path == "" {
		return ""
	}
	last := path[strings.LastIndex(path, "/")+1:]
	last, _, _ = strings.Cut(last, "@")
	last, _, _ = strings.Cut(last, ":")
	return last
}

// Referring returns the releases whose chartRef names source (a
// HelmChart or an OCIRepository): a change of the source can change their
// chart name.
func Referring(ctx context.Context, c client.Reader, source client.Object) ([]client.ObjectKey, error) {
	var kind string
	switch source.(type) {
	case *sourcev1.HelmChart:
		kind = releasev1.HelmChartKind
	case *sourcev1.OCIRepository:
		kind = releasev1.OCIRepositoryKind
	default:
		return nil, nil
	}
	var hrs helmv2.HelmReleaseList
	if err := c.List(ctx, &hrs); err != nil {
		return nil, fmt.Errorf("listing HelmReleases: %w", err)
	}
	var out []client.ObjectKey
	for i := range hrs.Items {
		hr := &hrs.Items[i]
		if namesSource(hr, kind, source.GetName(), source.GetNamespace()) {
			out = append(out, client.ObjectKeyFromObject(hr))
		}
	}
	return out, nil
}
