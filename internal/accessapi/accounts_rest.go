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
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// AccountREST is the read-only storage of accounts: a view of
// CredentialAccounts and their Secrets' metadata, computed on every read.
type AccountREST struct {
	ops *Operations
}

// NewAccountREST returns the storage of accounts backed by ops.
func NewAccountREST(ops *Operations) *AccountREST { return &AccountREST{ops: ops} }

var (
	_ rest.Storage              = &AccountREST{}
	_ rest.Getter               = &AccountREST{}
	_ rest.Lister               = &AccountREST{}
	_ rest.Scoper               = &AccountREST{}
	_ rest.SingularNameProvider = &AccountREST{}
	_ rest.CategoriesProvider   = &AccountREST{}
)

// New returns an empty Account.
func (r *AccountREST) New() runtime.Object { return &accessv1.Account{} }

// NewList returns an empty AccountList.
func (r *AccountREST) NewList() runtime.Object { return &accessv1.AccountList{} }

// Destroy releases nothing: there is no store.
func (r *AccountREST) Destroy() {}

// NamespaceScoped is true, as CredentialAccounts are.
func (r *AccountREST) NamespaceScoped() bool { return true }

// Categories puts accounts in the category credo, the one tenants use:
// `kubectl get credo -n <namespace>` lists them beside the TrustAnchors,
// EnrollmentPolicies, JoinTokens and Workloads, every kind a namespace
// viewer may read (CredentialAccounts are not).
func (r *AccountREST) Categories() []string { return []string{"credo"} }

// GetSingularName returns "account".
func (r *AccountREST) GetSingularName() string { return "account" }

// Get returns the view of one account.
func (r *AccountREST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	ns, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok || ns == "" {
		return nil, apierrors.NewBadRequest("a namespace is required")
	}
	return r.ops.Account(ctx, ns, name)
}

// List returns the views of the accounts of the request's namespace, or of
// every namespace.
func (r *AccountREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	if options == nil {
		return r.ops.Accounts(ctx, ns, nil, nil)
	}
	return r.ops.Accounts(ctx, ns, options.LabelSelector, options.FieldSelector)
}

var accountColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the CredentialAccount."},
	{Name: "Release", Type: "string", Description: "The HelmRelease of the account."},
	{Name: "Username", Type: "string", Description: "The account's username."},
	{Name: "Owner", Type: "string", Description: "tenant or platform."},
	{Name: "Format", Type: "string", Description: "How the password is stored."},
	{Name: "Origin", Type: "string", Description: "Origin of the current password."},
	{Name: "Secret Version", Type: "string", Description: "The account Secret's resourceVersion, for a conditional mint.", Priority: 1},
	{Name: "Last Change", Type: "string", Description: "When the password last changed."},
}

// ConvertToTable prints accounts for kubectl get.
func (r *AccountREST) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	var items []accessv1.Account
	table := &metav1.Table{ColumnDefinitions: accountColumns}
	switch o := object.(type) {
	case *accessv1.Account:
		items = []accessv1.Account{*o}
	case *accessv1.AccountList:
		items = o.Items
		table.ResourceVersion = o.ResourceVersion
	default:
		return nil, fmt.Errorf("cannot print %T as accounts", object)
	}
	now := time.Now()
	for i := range items {
		a := &items[i]
		last := "<none>"
		if a.Status.LastChange != nil {
			last = duration.HumanDuration(now.Sub(a.Status.LastChange.Time)) + " ago"
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{a.Name, a.Spec.Release, a.Spec.Username, a.Spec.Owner, a.Spec.Format, a.Status.Origin, a.Status.SecretResourceVersion, last},
			Object: runtime.RawExtension{Object: a},
		})
	}
	return table, nil
}

// accountSubresource serves accounts/<name>/<subresource>: a T whose
// account is the URL's name, so kube-apiserver's audit log names it
// (objectRef.name), created exactly as a T of the collection.
type accountSubresource[T apiObject] struct {
	collection *createOnly[T]
	// spec is the account request of a T.
	spec func(T) *accessv1.AccountRequestSpec
}

// Whatever T, an accountSubresource is:
var (
	_ rest.Storage                  = &accountSubresource[*accessv1.Mint]{}
	_ rest.NamedCreater             = &accountSubresource[*accessv1.Mint]{}
	_ rest.GroupVersionKindProvider = &accountSubresource[*accessv1.Mint]{}
)

// AccountMintREST serves accounts/<name>/mint.
type AccountMintREST = accountSubresource[*accessv1.Mint]

// NewAccountMintREST returns the mint subresource backed by ops.
func NewAccountMintREST(ops *Operations) *AccountMintREST {
	return &AccountMintREST{collection: NewMintREST(ops), spec: mintSpec}
}

// AccountRevocationREST serves accounts/<name>/revocation.
type AccountRevocationREST = accountSubresource[*accessv1.Revocation]

// NewAccountRevocationREST returns the revocation subresource backed by ops.
func NewAccountRevocationREST(ops *Operations) *AccountRevocationREST {
	return &AccountRevocationREST{collection: NewRevocationREST(ops), spec: revocationSpec}
}

// New returns an empty T: the body of the subresource.
func (r *accountSubresource[T]) New() runtime.Object { return r.collection.New() }

// Destroy releases nothing.
func (r *accountSubresource[T]) Destroy() {}

// GroupVersionKind returns access.credo.dev/v1alpha1 and T's kind.
func (r *accountSubresource[T]) GroupVersionKind(gv schema.GroupVersion) schema.GroupVersionKind {
	return r.collection.GroupVersionKind(gv)
}

// Create acts on the account name, exactly as a T of the collection.
func (r *accountSubresource[T]) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(T)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a %s: %T", r.collection.kind, obj))
	}
	if err := accountFromURL(name, r.spec(in)); err != nil {
		return nil, err
	}
	return r.collection.Create(ctx, in, createValidation, options)
}

// accountFromURL makes the URL's account the request's: spec.account may
// be empty or the same name, never another.
func accountFromURL(name string, spec *accessv1.AccountRequestSpec) error {
	if name == "" {
		return apierrors.NewBadRequest("the account name is required in the URL")
	}
	if spec.Account != "" && spec.Account != name {
		return apierrors.NewBadRequest(fmt.Sprintf(
			"spec.account %q does not match the account %q in the URL: leave spec.account empty or set it to the URL's account", spec.Account, name))
	}
	spec.Account = name
	return nil
}
