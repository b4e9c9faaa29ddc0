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
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/credo-dev/credo/internal/release"
)

// ReleaseCacheTransform is the trust-controller's cache transform of
// HelmReleases (ConfigureCache). Of a release it keeps what the controller
// reads:
//
//   - its metadata: name, namespace and UID (the owner reference of
//     projections and TrustAnchors), labels (rules' release selectors and
//     shard labels), generation (the watch predicate), deletion timestamp,
//     resource version and annotations (events recorded on the release
//     name it and carry its event.toolkit.fluxcd.io annotations);
//   - spec.chart.spec.chart and spec.chartRef: a rule's chart is matched
//     against them (release.ChartName).
//
// It drops the rest of the spec (spec.values, which a tenant fills with
// anything up to etcd's limit, above all) and the status, which the
// trust-controller never reads, besides the managed fields and kubectl's
// last-applied-configuration (release.CacheTransform).
func ReleaseCacheTransform() toolscache.TransformFunc {
	return release.CacheTransform(func(hr *helmv2.HelmRelease) {
		hr.Spec = helmv2.HelmReleaseSpec{Chart: release.ChartOnly(hr.Spec.Chart), ChartRef: hr.Spec.ChartRef}
		hr.Status = helmv2.HelmReleaseStatus{}
	})
}
