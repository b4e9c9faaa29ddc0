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
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheTransform returns a cache transform of HelmReleases that drops,
// before the cache stores a release, what prune drops of it: what a
// controller never reads. Whatever prune keeps, it also drops the managed
// fields (cache.TransformStripManagedFields, the managers' DefaultTransform,
// which a transform of a kind's own replaces) and kubectl's
// last-applied-configuration annotation (a copy of the spec as last
// applied, spec.values included, up to 256 KiB). A release's spec.values is
// its tenant's to fill, with anything up to etcd's limit, and a cluster-wide
// controller caching it whole holds every tenant's megabytes. Anything else
// (a tombstone) passes unchanged.
func CacheTransform(prune func(*helmv2.HelmRelease)) toolscache.TransformFunc {
	return func(in any) (any, error) {
		hr, ok := in.(*helmv2.HelmRelease)
		if !ok {
			return in, nil
		}
		hr.ManagedFields = nil
		delete(hr.Annotations, corev1.LastAppliedConfigAnnotation)
		prune(hr)
		return hr, nil
	}
}

// WithCacheTransform sets t as the transform of HelmReleases in byObject
// (nil: a new map), keeping the other options of their entry (a shard's
// label selector, Shard.ByObject), and returns byObject.
func WithCacheTransform(byObject map[client.Object]cache.ByObject, t toolscache.TransformFunc) map[client.Object]cache.ByObject {
	if byObject == nil {
		byObject = map[client.Object]cache.ByObject{}
	}
	for obj, opts := range byObject {
		if _, ok := obj.(*helmv2.HelmRelease); ok {
			opts.Transform = t
			byObject[obj] = opts
			return byObject
		}
	}
	byObject[&helmv2.HelmRelease{}] = cache.ByObject{Transform: t}
	return byObject
}

// ChartOnly returns of a release's spec.chart only the chart's name, which
// a rule's chart is matched against (ChartName); nil for nil.
func ChartOnly(chart *helmv2.HelmChartTemplate) *helmv2.HelmChartTemplate {
	if chart == nil {
		return nil
	}
	return &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: chart.Spec.Chart}}
}
