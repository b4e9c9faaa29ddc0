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

package accessapi

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
)

// dryRunRefused is the answer to a dry-run request: a mint has effects (a
// new password) that cannot be previewed without making them.
const dryRunRefused = "dry run is not supported: a mint has effects"

// request is what every create-only kind shares: who asks, in which
// namespace. It validates the request and never logs.
func request(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (namespace, user string, err error) {
	if options != nil && len(options.DryRun) > 0 {
		return "", "", apierrors.NewBadRequest(dryRunRefused)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return "", "", err
		}
	}
	namespace, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok || namespace == "" {
		return "", "", apierrors.NewBadRequest("a namespace is required")
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok || u.GetName() == "" {
		return "", "", apierrors.NewUnauthorized("no authenticated user in the request")
	}
	return namespace, u.GetName(), nil
}

// apiObject is a kind of the access API: a pointer to one of its types.
type apiObject interface {
	runtime.Object
	metav1.Object
}

// createOnly is the storage of a namespaced kind that is only ever created
// (mints, revocations, join token requests): nothing is persisted; the
// response, the request with its status filled, carries once what the
// create made.
type createOnly[T apiObject] struct {
	// kind is T's kind: "Mint".
	kind string
	// singular is the resource's singular name: "mint".
	singular string
	// newObject returns an empty T.
	newObject func() T
	// create acts for user in namespace on out, a copy of the request in
	// namespace: it fills out's status and returns when it acted and the
	// warnings for the client.
	create func(ctx context.Context, namespace, user string, out T) (at time.Time, warnings []string, err error)
	// operation names the create in metrics.AccessRefused and succeeded
	// counts it done (metrics.OperationMint, metrics.Minted); empty and
	// nil count nothing.
	operation string
	succeeded func(namespace string)
}

// Whatever T, a createOnly is:
var (
	_ rest.Storage                  = &createOnly[*accessv1.Mint]{}
	_ rest.Creater                  = &createOnly[*accessv1.Mint]{}
	_ rest.Scoper                   = &createOnly[*accessv1.Mint]{}
	_ rest.SingularNameProvider     = &createOnly[*accessv1.Mint]{}
	_ rest.GroupVersionKindProvider = &createOnly[*accessv1.Mint]{}
)

// New returns an empty T.
func (r *createOnly[T]) New() runtime.Object { return r.newObject() }

// Destroy releases nothing: there is no store.
func (r *createOnly[T]) Destroy() {}

// NamespaceScoped is true: a mint or a revocation acts on an account of its
// namespace, a join token enrolls under a policy of its namespace.
func (r *createOnly[T]) NamespaceScoped() bool { return true }

// GetSingularName returns the singular name: "mint".
func (r *createOnly[T]) GetSingularName() string { return r.singular }

// GroupVersionKind returns access.credo.dev/v1alpha1 and the kind.
func (r *createOnly[T]) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return accessv1.GroupVersion.WithKind(r.kind)
}

// Create acts on the request and returns it with its status filled.
func (r *createOnly[T]) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(T)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a %s: %T", r.kind, obj))
	}
	namespace, user, err := request(ctx, obj, createValidation, options)
	if err != nil {
		r.refused(genericapirequest.NamespaceValue(ctx), err)
		return nil, err
	}
	out := in.DeepCopyObject().(T) // a copy of a T is a T
	out.SetNamespace(namespace)
	at, warnings, err := r.create(ctx, namespace, user, out)
	if err != nil {
		r.refused(namespace, err)
		return nil, err
	}
	if r.succeeded != nil {
		r.succeeded(namespace)
	}
	addWarnings(ctx, warnings)
	out.SetCreationTimestamp(metav1.NewTime(at))
	return out, nil
}

// refused counts a refusal of the create in namespace.
func (r *createOnly[T]) refused(namespace string, err error) {
	if r.operation != "" {
		metrics.AccessRefused(namespace, r.operation, err)
	}
}
