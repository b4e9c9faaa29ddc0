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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

const (
	// sourceNameIndex indexes TrustAnchors by spec.source.name.
	sourceNameIndex = ".spec.source.name"
	// discoveredByIndex indexes TrustAnchors by their discovered-by annotation.
	discoveredByIndex = ".metadata.annotations.discoveredBy"
)

// indexTrustAnchors registers the field indexers the map functions use.
func indexTrustAnchors(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &trustv1.TrustAnchor{}, sourceNameIndex, func(o client.Object) []string {
		ta, ok := o.(*trustv1.TrustAnchor)
		if !ok || ta.Spec.Source.Name == "" {
			return nil
		}
		return []string{ta.Spec.Source.Name}
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", sourceNameIndex, err)
	}
	if err := indexer.IndexField(ctx, &trustv1.TrustAnchor{}, discoveredByIndex, func(o client.Object) []string {
		if v, ok := o.GetAnnotations()[trustv1.DiscoveredByAnnotation]; ok {
			return []string{v}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", discoveredByIndex, err)
	}
	return nil
}
