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

// request is what both kinds share: who asks, in which namespace, for which
// account. It validates the request and never logs.
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

// MintREST is the create-only storage of mints: nothing is persisted; the
// response carries the password once.
type MintREST struct {
	ops *Operations
}

// NewMintREST returns the storage of mints backed by ops.
func NewMintREST(ops *Operations) *MintREST { return &MintREST{ops: ops} }

var (
	_ rest.Storage                  = &MintREST{}
	_ rest.Creater                  = &MintREST{}
	_ rest.Scoper                   = &MintREST{}
	_ rest.SingularNameProvider     = &MintREST{}
	_ rest.GroupVersionKindProvider = &MintREST{}
)

// New returns an empty Mint.
func (r *MintREST) New() runtime.Object { return &accessv1.Mint{} }

// Destroy releases nothing: there is no store.
func (r *MintREST) Destroy() {}

// NamespaceScoped is true: a mint acts on an account of its namespace.
func (r *MintREST) NamespaceScoped() bool { return true }

// GetSingularName returns "mint".
func (r *MintREST) GetSingularName() string { return "mint" }

// GroupVersionKind returns access.credo.dev/v1alpha1 Mint.
func (r *MintREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return accessv1.GroupVersion.WithKind("Mint")
}

// Create mints and returns the Mint with its status filled.
func (r *MintREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	m, ok := obj.(*accessv1.Mint)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Mint: %T", obj))
	}
	namespace, user, err := request(ctx, obj, createValidation, options)
	if err != nil {
		metrics.AccessRefused(genericapirequest.NamespaceValue(ctx), metrics.OperationMint, err)
		return nil, err
	}
	res, err := r.ops.Mint(ctx, namespace, m.Spec, user)
	if err != nil {
		metrics.AccessRefused(namespace, metrics.OperationMint, err)
		return nil, err
	}
	metrics.Minted(namespace)
	addWarnings(ctx, res.Warnings)
	out := m.DeepCopy()
	out.Namespace = namespace
	out.CreationTimestamp = metav1.NewTime(res.At)
	out.Status = accessv1.MintStatus{
		Username:        res.Username,
		Password:        res.Password,
		SecretName:      res.SecretName,
		ResourceVersion: res.ResourceVersion,
		MintedAt:        metav1.NewTime(res.At),
	}
	return out, nil
}

// RevocationREST is the create-only storage of revocations.
type RevocationREST struct {
	ops *Operations
}

// NewRevocationREST returns the storage of revocations backed by ops.
func NewRevocationREST(ops *Operations) *RevocationREST { return &RevocationREST{ops: ops} }

var (
	_ rest.Storage                  = &RevocationREST{}
	_ rest.Creater                  = &RevocationREST{}
	_ rest.Scoper                   = &RevocationREST{}
	_ rest.SingularNameProvider     = &RevocationREST{}
	_ rest.GroupVersionKindProvider = &RevocationREST{}
)

// New returns an empty Revocation.
func (r *RevocationREST) New() runtime.Object { return &accessv1.Revocation{} }

// Destroy releases nothing: there is no store.
func (r *RevocationREST) Destroy() {}

// NamespaceScoped is true: a revocation acts on an account of its namespace.
func (r *RevocationREST) NamespaceScoped() bool { return true }

// GetSingularName returns "revocation".
func (r *RevocationREST) GetSingularName() string { return "revocation" }

// GroupVersionKind returns access.credo.dev/v1alpha1 Revocation.
func (r *RevocationREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return accessv1.GroupVersion.WithKind("Revocation")
}

// Create revokes and returns the Revocation with its status filled.
func (r *RevocationREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	rv, ok := obj.(*accessv1.Revocation)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Revocation: %T", obj))
	}
	namespace, user, err := request(ctx, obj, createValidation, options)
	if err != nil {
		metrics.AccessRefused(genericapirequest.NamespaceValue(ctx), metrics.OperationRevoke, err)
		return nil, err
	}
	res, err := r.ops.Revoke(ctx, namespace, rv.Spec, user)
	if err != nil {
		metrics.AccessRefused(namespace, metrics.OperationRevoke, err)
		return nil, err
	}
	metrics.Revoked(namespace)
	addWarnings(ctx, res.Warnings)
	out := rv.DeepCopy()
	out.Namespace = namespace
	out.CreationTimestamp = metav1.NewTime(res.At)
	out.Status = accessv1.RevocationStatus{
		SecretName:      res.SecretName,
		ResourceVersion: res.ResourceVersion,
		RevokedAt:       metav1.NewTime(res.At),
	}
	return out, nil
}
