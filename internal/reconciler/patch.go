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

package reconciler

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patcher writes what a reconcile changed of an object in as few requests
// as it can: at most one status patch, conditions and the rest of the
// status together, and a patch of the object only when the chain changed
// its metadata or spec without writing them. fluxcd/pkg/runtime's patch
// helper sends the conditions and the rest of the status apart (two status
// patches for every new object), with an optimistic lock on the first.
//
// The status patch is a JSON merge patch from the object as the reconcile
// read it: a field it did not change is not sent, and a list (the
// conditions) is sent whole when any of it changed. It carries no lock: the
// status of a kind reconciled through Finish has one writer, its
// controller (the lifecycle kinds, which have two, end through FinishState).
type Patcher struct {
	client client.Client
	before client.Object
}

// NewPatcher records obj as read, for the patches Patch computes.
func NewPatcher(obj client.Object, c client.Client) *Patcher {
	before, _ := obj.DeepCopyObject().(client.Object)
	return &Patcher{client: c, before: before}
}

// Patch sends what changed of obj since NewPatcher, under fieldOwner. With
// observedGeneration, status.observedGeneration is set to obj's generation
// first. The server's answer is decoded into obj.
func (p *Patcher) Patch(ctx context.Context, obj client.Object, fieldOwner string, observedGeneration bool) error {
	after, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %s to unstructured: %w", obj.GetName(), err)
	}
	if observedGeneration {
		if _, ok := after["status"]; ok {
			if err := unstructured.SetNestedField(after, obj.GetGeneration(), "status", "observedGeneration"); err != nil {
				return err
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(after, obj); err != nil {
				return err
			}
		}
	}
	before, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.before)
	if err != nil {
		return fmt.Errorf("converting %s to unstructured: %w", obj.GetName(), err)
	}
	// Both patches are computed before either is sent: each answer is
	// decoded into obj, the object's after the first with the old status.
	object, err := mergePatch(before, after, "metadata", "spec")
	if err != nil {
		return err
	}
	status, err := mergePatch(before, after, "status")
	if err != nil {
		return err
	}
	if object != nil {
		if err := p.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, object), client.FieldOwner(fieldOwner)); err != nil {
			return fmt.Errorf("patching %s: %w", obj.GetName(), err)
		}
	}
	if status != nil {
		if err := p.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, status), client.FieldOwner(fieldOwner)); err != nil {
			return fmt.Errorf("patching the status of %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// serverFields are the metadata the server writes: never sent, so that a
// patch carries no optimistic lock and no stale value of them.
var serverFields = []string{"resourceVersion", "managedFields", "generation", "creationTimestamp", "uid"}

// mergePatch is the JSON merge patch of the top-level fields from before to
// after, without the server's metadata, or nil when none changed.
func mergePatch(before, after map[string]any, fields ...string) ([]byte, error) {
	pick := func(o map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		for _, f := range fields {
			if v, ok := o[f]; ok {
				u.Object[f] = runtime.DeepCopyJSONValue(v)
			}
		}
		for _, f := range serverFields {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		return u
	}
	data, err := client.MergeFrom(pick(before)).Data(pick(after))
	if err != nil {
		return nil, fmt.Errorf("computing a merge patch: %w", err)
	}
	if string(data) == "{}" {
		return nil, nil
	}
	return data, nil
}
