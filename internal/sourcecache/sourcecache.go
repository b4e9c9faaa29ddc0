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

// Package sourcecache keeps in memory the CA certificates of the trust
// anchors' label-leg sources, so that a rotation or a cold start reads no
// source from the API server, and nothing else of any Secret.
//
// The cache holds only Secrets labelled <d>/publish-ca-cert=true (the label
// selector is the watch's, so no other Secret reaches the controller through
// it), and of each only the key its <d>/publish-ca-cert-key annotation names
// (ca.crt by default), and that only while the value is certificates and
// nothing else (pem.Parse): a value with a private key, or any other value
// the guard refuses, is dropped before the object is stored, and the
// reconciler reads such a source uncached to report why. Managed fields and
// kubectl's last-applied-configuration (which holds a Secret's whole data)
// are dropped too. The name leg's sources carry no label and are read
// uncached, as before.
package sourcecache

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/intern"
	"github.com/credo-dev/credo/internal/pem"
)

// MaxValue bounds a cached value: a larger one (a bundle of hundreds of
// certificates) is read uncached, so that a tenant's labelled Secrets cannot
// make the controller hold more than this each.
const MaxValue = 64 << 10

// LastAppliedAnnotation is kubectl's copy of the last applied object: on a
// Secret it holds the whole data, private keys included. No cache keeps it.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// ReleaseIndex indexes the cached sources by the release their label names
// (ContractKeys.Release): a release's sources are found without reading
// every source of the namespace (client.MatchingFields{ReleaseIndex: name}).
const ReleaseIndex = "credo.dev/source-release"

// New returns the cache of label-leg sources and adds it to the manager,
// which starts it before any controller and stops it with the others. It
// runs on every replica, as the manager's own cache does.
func New(mgr ctrl.Manager, keys trustv1.ContractKeys) (cache.Cache, error) {
	sel := labels.SelectorFromSet(labels.Set{keys.PublishCACert: "true"})
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: sel, Transform: intern.Transform(Transform(keys))},
		},
		// Only Secrets: any other kind read from this cache is an error.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("building the cache of label-leg sources: %w", err)
	}
	if _, err := c.GetInformer(context.Background(), &corev1.Secret{}); err != nil {
		return nil, fmt.Errorf("registering the informer of label-leg sources: %w", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Secret{}, ReleaseIndex, func(o client.Object) []string {
		if r := o.GetLabels()[keys.Release]; r != "" {
			return []string{r}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("indexing label-leg sources by release: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the cache of label-leg sources: %w", err)
	}
	return c, nil
}

// Transform reduces a source Secret to what the reconciler reads of it: its
// metadata without managed fields or last-applied-configuration, and the one
// key the source publishes, when it holds certificates only and at most
// MaxValue bytes.
func Transform(keys trustv1.ContractKeys) toolscache.TransformFunc {
	return func(in any) (any, error) {
		s, ok := in.(*corev1.Secret)
		if !ok {
			return in, nil // a tombstone passes unchanged
		}
		key := s.Annotations[keys.Key]
		if key == "" {
			key = trustv1.DefaultSourceKey
		}
		v := s.Data[key]
		s.ManagedFields = nil
		delete(s.Annotations, LastAppliedAnnotation)
		s.Data, s.StringData = nil, nil
		if certificatesOnly(v) {
			s.Data = map[string][]byte{key: v}
		}
		return s, nil
	}
}

// certificatesOnly reports whether v may be cached: not empty, at most
// MaxValue bytes, and certificates and nothing else.
func certificatesOnly(v []byte) bool {
	if len(v) == 0 || len(v) > MaxValue {
		return false
	}
	_, err := pem.Parse(v)
	return err == nil
}

// Value returns the value of key of the source Secret named by obj from the
// cache c, and whether the cache settles the read: false when the cache
// does not hold the Secret (not labelled, a name-leg source, or not seen
// yet) or holds it without the key (the key is missing, refused by the
// guard, or too large). The caller then reads the Secret uncached.
func Value(ctx context.Context, c client.Reader, obj client.ObjectKey, key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	var s corev1.Secret
	if err := c.Get(ctx, obj, &s); err != nil {
		return nil, false
	}
	v, ok := s.Data[key]
	return v, ok && len(v) > 0
}
