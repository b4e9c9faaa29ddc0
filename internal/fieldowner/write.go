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

package fieldowner

import (
	"context"
	"fmt"
	"reflect"

	"github.com/fluxcd/pkg/ssa/normalize"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The door every guarded write of credo goes through: the projection of a
// trust anchor, an account Secret or a kept password, the enrollment CA's
// TrustAnchor. Whoever calls it has read the object uncached and decided,
// with Wrote and its own guard, that the object is absent or its own.
//
//   - An object that does not exist is created (Create), never applied: an
//     object someone else created since the read fails the create with
//     AlreadyExists instead of being merged into.
//   - An object that exists is written over the version read (ApplyOver),
//     with that resourceVersion as the precondition: an object changed or
//     replaced since fails the write with Conflict instead of being written
//     over. An apply without one would create a missing object or merge into
//     whatever is there, so ApplyOver refuses to send it.

// Create creates obj under owner. A create that finds an object of the
// name fails with AlreadyExists (apierrors.IsAlreadyExists); obj then holds
// what was sent.
func Create(ctx context.Context, c client.Writer, obj client.Object, owner string) error {
	return c.Create(ctx, obj, client.FieldOwner(owner))
}

// ApplyOver server-side applies desired (a typed object with its kind set)
// over the object of owner's at resourceVersion, forcing owner's ownership
// of its fields, and returns the object stored. desired is normalised as
// Flux's ssa normalises every object it applies (no creationTimestamp, no
// status); it is not modified. A change of the object since
// resourceVersion fails with Conflict (apierrors.IsConflict holds on the
// error).
func ApplyOver[T client.Object](ctx context.Context, c client.Writer, desired T, resourceVersion, owner string) (T, error) {
	var stored T
	if resourceVersion == "" {
		return stored, fmt.Errorf("applying %s %s: no resourceVersion to apply over", kindOf(desired), desired.GetName())
	}
	u, err := normalize.ToUnstructured(desired)
	if err != nil {
		return stored, fmt.Errorf("converting %s %s: %w", kindOf(desired), desired.GetName(), err)
	}
	if err := normalize.Unstructured(u); err != nil {
		return stored, fmt.Errorf("normalising %s: %w", ssautils.FmtUnstructured(u), err)
	}
	u.SetResourceVersion(resourceVersion)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
		return stored, fmt.Errorf("%s apply failed: %w", ssautils.FmtUnstructured(u), err)
	}
	// The apply writes the stored object back into u.
	stored = reflect.New(reflect.TypeOf(desired).Elem()).Interface().(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, stored); err != nil {
		return stored, fmt.Errorf("reading the applied %s: %w", ssautils.FmtUnstructured(u), err)
	}
	return stored, nil
}

func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return "object"
}
