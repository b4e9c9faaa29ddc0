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

package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/release"
)

// ReleaseCacheTransform is the credential-controller's cache transform of
// HelmReleases (ConfigureCache). Of a release it keeps what the
// CredentialAccount and AccountSource reconcilers and the access API read:
//
//   - its metadata (annotations and labels included), without the managed
//     fields and kubectl's last-applied-configuration (a copy of
//     spec.values; release.CacheTransform);
//   - of the spec: the chart's name and chartRef (a rule's chart), the
//     Helm release's name and namespaces (whose Secrets are adopted),
//     suspend, valuesFrom (the deliveries) and postRenderers (which may
//     rewrite a delivery);
//   - of the status: the observed generation, the last handled reconcile
//     request, the conditions, the storage namespace, the last attempted
//     config digest and the latest snapshot of the history (what the
//     chart last deployed, and with which values).
//
// It drops the rest: spec.values above all, which a tenant fills with
// anything up to etcd's limit and which a cluster-wide cache would hold for
// every tenant (the AccountSources that derive usernames from values read
// the release uncached: releaseValues, reservedUsername), and the status'
// inventory and older snapshots, which grow with the chart and its
// history. The reconcilers write a release only by merge patches computed
// from the cached copy, which leave what the cache dropped alone.
func ReleaseCacheTransform() toolscache.TransformFunc {
	return release.CacheTransform(func(hr *helmv2.HelmRelease) {
		spec, status := hr.Spec, hr.Status
		hr.Spec = helmv2.HelmReleaseSpec{
			Chart:            release.ChartOnly(spec.Chart),
			ChartRef:         spec.ChartRef,
			ReleaseName:      spec.ReleaseName,
			TargetNamespace:  spec.TargetNamespace,
			StorageNamespace: spec.StorageNamespace,
			Suspend:          spec.Suspend,
			ValuesFrom:       spec.ValuesFrom,
			PostRenderers:    spec.PostRenderers,
		}
		hr.Status = helmv2.HelmReleaseStatus{
			ObservedGeneration:        status.ObservedGeneration,
			ReconcileRequestStatus:    status.ReconcileRequestStatus,
			Conditions:                status.Conditions,
			StorageNamespace:          status.StorageNamespace,
			LastAttemptedConfigDigest: status.LastAttemptedConfigDigest,
		}
		if latest := status.History.Latest(); latest != nil {
			hr.Status.History = helmv2.Snapshots{latest}
		}
	})
}

// errReleaseReplaced: the release read uncached is not the one cached (it
// was deleted, or deleted and created again, since).
var errReleaseReplaced = errors.New("the release was replaced since it was cached")

// valuesRead is what was read of one release at one generation.
type valuesRead struct {
	uid        types.UID
	generation int64
	paths      map[string]pathKeys
}

// pathKeys is what valuesMapKeys found at one path.
type pathKeys struct {
	keys []string
	err  error
}

// keysAt returns the keys at each of paths of hr's spec.values (none when
// paths is empty), reading hr uncached unless it was read at its
// generation. errReleaseReplaced, or a NotFound error, when the release is
// no longer the one cached.
func (v *releaseValues) keysAt(ctx context.Context, hr *helmv2.HelmRelease, paths []string) (map[string]pathKeys, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	key := client.ObjectKeyFromObject(hr)
	v.mu.Lock()
	prev, ok := v.read[key]
	v.mu.Unlock()
	if ok && prev.uid == hr.UID && prev.generation == hr.Generation && hasPaths(prev.paths, paths) {
		return prev.paths, nil
	}
	fresh := &helmv2.HelmRelease{}
	if err := v.reader.Get(ctx, key, fresh); err != nil {
		return nil, fmt.Errorf("reading the values of HelmRelease %s: %w", key, err)
	}
	if fresh.UID != hr.UID {
		return nil, fmt.Errorf("HelmRelease %s: %w", key, errReleaseReplaced)
	}
	read := valuesRead{uid: fresh.UID, generation: fresh.Generation, paths: map[string]pathKeys{}}
	if ok && prev.uid == fresh.UID && prev.generation == fresh.Generation {
		for p, k := range prev.paths {
			read.paths[p] = k
		}
	}
	for _, p := range paths {
		keys, err := valuesMapKeys(fresh.Spec.Values, p)
		read.paths[p] = pathKeys{keys: keys, err: err}
	}
	v.mu.Lock()
	if v.read == nil {
		v.read = map[client.ObjectKey]valuesRead{}
	}
	v.read[key] = read
	v.mu.Unlock()
	return read.paths, nil
}

// retain forgets the releases not in listed.
func (v *releaseValues) retain(listed map[client.ObjectKey]bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for key := range v.read {
		if !listed[key] {
			delete(v.read, key)
		}
	}
}

func hasPaths(have map[string]pathKeys, paths []string) bool {
	for _, p := range paths {
		if _, ok := have[p]; !ok {
			return false
		}
	}
	return true
}

// valuesMapKeys returns the sorted keys of the map at a dot path of a
// release's spec.values. An absent path is an empty map; a path that holds
// something else than a map is an error.
func valuesMapKeys(values *apiextensionsv1.JSON, path string) ([]string, error) {
	if values == nil || len(values.Raw) == 0 {
		return nil, nil
	}
	var cur any
	if err := json.Unmarshal(values.Raw, &cur); err != nil {
		return nil, fmt.Errorf("spec.values: %w", err)
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.values.%s: not a map", path)
		}
		if cur, ok = m[part]; !ok {
			return nil, nil
		}
	}
	if cur == nil {
		return nil, nil
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.values.%s: not a map", path)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// releaseValues reads what AccountSources derive from releases' spec.values,
// which the cache does not hold: the keys of the maps at their valuesMap
// paths. A release is read uncached when one of its paths is asked for at
// a generation (spec.values changes only with it) not read yet; the keys
// are kept until the release is no longer listed, the values never.
type releaseValues struct {
	reader client.Reader

	mu   sync.Mutex
	read map[client.ObjectKey]valuesRead
}
