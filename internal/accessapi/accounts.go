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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// The view reads CredentialAccounts and the metadata of account Secrets
// (never their data).
// +kubebuilder:rbac:groups=credentials.credo.dev,resources=credentialaccounts,verbs=get;list
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list

var accountsResource = accessv1.GroupVersion.WithResource("accounts").GroupResource()

// Account returns the view of the CredentialAccount name in namespace.
// It reads the account Secret's metadata only: the password is never read.
func (o *Operations) Account(ctx context.Context, namespace, name string) (*accessv1.Account, error) {
	if err := validAccountName(name); err != nil {
		return nil, err
	}
	var acct credv1.CredentialAccount
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &acct); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewNotFound(accountsResource, name)
		}
		return nil, internalError(fmt.Errorf("reading CredentialAccount %s: %w", name, err))
	}
	if acct.GetOwner() == credv1.OwnerPlatform {
		// Platform accounts are not the tenant's to see: answered as absent.
		return nil, apierrors.NewNotFound(accountsResource, name)
	}
	s := secretMetadata()
	secretName := acct.SecretName()
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, s); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, internalError(fmt.Errorf("reading Secret %s: %w", secretName, err))
		}
		s = nil
	}
	return o.view(&acct, s), nil
}

// Accounts lists the views of the CredentialAccounts of namespace (every
// namespace when empty) that match the label selector (on the
// CredentialAccount) and the field selector (metadata.name,
// metadata.namespace). Two reads: the accounts, and the metadata of the
// labelled account Secrets.
func (o *Operations) Accounts(ctx context.Context, namespace string, lsel labels.Selector, fsel fields.Selector) (*accessv1.AccountList, error) {
	if fsel != nil {
		for _, r := range fsel.Requirements() {
			if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("field selector %q is not supported: only metadata.name and metadata.namespace", r.Field))
			}
		}
	}
	opts := []client.ListOption{client.InNamespace(namespace)}
	if lsel != nil && !lsel.Empty() {
		opts = append(opts, client.MatchingLabelsSelector{Selector: lsel})
	}
	var accts credv1.CredentialAccountList
	if err := o.Client.List(ctx, &accts, opts...); err != nil {
		return nil, internalError(fmt.Errorf("listing CredentialAccounts: %w", err))
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := o.Client.List(ctx, secrets, client.InNamespace(namespace), client.HasLabels{o.Keys.Account}); err != nil {
		return nil, internalError(fmt.Errorf("listing account Secrets: %w", err))
	}
	byKey := make(map[client.ObjectKey]*metav1.PartialObjectMetadata, len(secrets.Items))
	for i := range secrets.Items {
		s := &secrets.Items[i]
		byKey[client.ObjectKey{Namespace: s.Namespace, Name: s.Name}] = s
	}
	out := &accessv1.AccountList{ListMeta: metav1.ListMeta{ResourceVersion: accts.ResourceVersion}}
	for i := range accts.Items {
		a := &accts.Items[i]
		if a.GetOwner() == credv1.OwnerPlatform ||
			(fsel != nil && !fsel.Matches(fields.Set{"metadata.name": a.Name, "metadata.namespace": a.Namespace})) {
			continue
		}
		key := client.ObjectKey{Namespace: a.Namespace, Name: a.SecretName()}
		out.Items = append(out.Items, *o.view(a, byKey[key]))
	}
	return out, nil
}

// secretMetadata is an empty metadata-only Secret to read into.
func secretMetadata() *metav1.PartialObjectMetadata {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return s
}

// view builds the Account of acct; s is the metadata of its Secret, nil
// when missing. The record (origin, history) is read from a Secret credo
// wrote for this account (it carries the account's UID), as the controller
// does; otherwise from the account's status. Any other Secret shows no
// resourceVersion: a mint refuses it. Platform accounts have no view.
func (o *Operations) view(acct *credv1.CredentialAccount, s *metav1.PartialObjectMetadata) *accessv1.Account {
	v := &accessv1.Account{
		ObjectMeta: metav1.ObjectMeta{
			Name:              acct.Name,
			Namespace:         acct.Namespace,
			UID:               acct.UID,
			CreationTimestamp: acct.CreationTimestamp,
			Labels:            acct.Labels,
		},
		Spec: accessv1.AccountSpec{
			Release:    acct.Spec.Release,
			Username:   acct.Spec.Username,
			Owner:      string(acct.GetOwner()),
			Format:     acct.Spec.Format.Name,
			FormatKind: string(acct.GetFormatKind()),
			Suspend:    acct.Spec.Suspend,
		},
		Status: accessv1.AccountStatus{SecretName: acct.SecretName()},
	}
	v.SetGroupVersionKind(accessv1.GroupVersion.WithKind("Account"))
	origin, history := acct.Status.Origin, acct.Status.History
	if s != nil && o.Keys.Guard(s, acct, false) == nil {
		v.Status.SecretResourceVersion = s.ResourceVersion
		origin = credv1.Origin(s.Annotations[o.Keys.Origin])
		history = account.ParseHistory(s.Annotations[o.Keys.History])
	}
	v.Status.Origin = string(origin)
	for _, h := range history {
		v.Status.History = append(v.Status.History, accessv1.AccountOperation{Operation: string(h.Operation), At: h.At, By: h.By})
	}
	if n := len(history); n > 0 {
		at := history[n-1].At
		v.Status.LastChange = &at
	}
	if c := conditions.Get(acct, credv1.AppliedCondition); c != nil {
		v.Status.Applied = &accessv1.AccountApplied{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	}
	if c := conditions.Get(acct, meta.ReadyCondition); c != nil {
		v.Status.Ready = &accessv1.AccountReady{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	}
	return v
}
