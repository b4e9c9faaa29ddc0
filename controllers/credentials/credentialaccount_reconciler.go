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
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxcontroller "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/exposure"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
	"github.com/credo-dev/credo/internal/shard"
)

// LegacyFinalizer is the finalizer earlier versions put on every
// CredentialAccount. None is put any more: a finalizer in a tenant
// namespace wedges its deletion in Terminating while the controller is
// down. What an account leaves behind is swept instead (sweep.go); the
// controller removes this one wherever it finds it.
const LegacyFinalizer = "credentials.credo.dev/finalizer"

// eventActionAccount is the action of every credential-controller event.
const eventActionAccount = "Account"

// CredentialAccountReconciler keeps each account's Secret: created
// NotIssued (or Generated for a platform account), owned by the HelmRelease,
// never a foreign Secret, and delivered through valuesFrom where asked.
type CredentialAccountReconciler struct {
	client.Client
	// APIReader reads Secrets uncached: no Secret data is cached.
	APIReader     client.Reader
	EventRecorder events.Recorder
	fluxcontroller.Metrics

	AccountKeys AccountKeys
	// PlatformNamespace keeps the passwords of platform accounts.
	PlatformNamespace string
	// Shard is the part of the accounts served (--watch-label-selector);
	// the zero Shard serves all. The manager's cache must hold only the
	// shard's ShardedObjects.
	Shard shard.Shard
	// ValuesFromOwners selects the HelmReleases whose spec.valuesFrom
	// another writer owns (--values-from-owner-selector): credo never
	// edits their list, and reports an entry missing from it
	// (ValuesFromMissing). Nil or empty selects none.
	ValuesFromOwners labels.Selector
	// Exposure checks, before a platform plaintext is written, that no
	// tenant may read it (PlaintextExposed).
	Exposure *exposure.Checker
	// Now returns the time; time.Now when nil.
	Now func() time.Time

	// engines are the operator kinds observed for the Applied condition.
	engines appliedEngines
	// rewrites bounds what credo puts back on a release after another
	// writer undid it.
	rewrites rewriteGuard
}

// dropLegacyFinalizer removes the finalizer an earlier version put on acct.
func (r *CredentialAccountReconciler) dropLegacyFinalizer(ctx context.Context, acct *credv1.CredentialAccount) error {
	if !controllerutil.ContainsFinalizer(acct, LegacyFinalizer) {
		return nil
	}
	before := acct.DeepCopy()
	controllerutil.RemoveFinalizer(acct, LegacyFinalizer)
	if err := r.Patch(ctx, acct, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("removing the finalizer %s: %w", LegacyFinalizer, err)
	}
	return nil
}

// fail marks a negative-polarity condition from a typed error, with the
// event its policy asks for on a transition (a Warning on the release too).
func (r *CredentialAccountReconciler) fail(ev reconciler.Events, acct *credv1.CredentialAccount, condType string, err error) error {
	if reason := reconciler.ReasonOf(err); reason == credv1.NameCollisionReason || reason == credv1.AccountCollisionReason {
		metrics.AccountCollision(acct.Namespace)
	}
	return ev.Fail(acct, condType, err, account.EventMetadata(acct))
}

// events records the credential-controller's events about the release hr
// (nil when it is not read).
func (r *CredentialAccountReconciler) events(hr *helmv2.HelmRelease) reconciler.Events {
	return reconciler.Events{Recorder: r.EventRecorder, Action: eventActionAccount, Release: hr}
}

// AccountKeys are the annotation and label keys of account Secrets.
type AccountKeys = account.Keys

// NewAccountKeys returns the keys under domain.
func NewAccountKeys(domain string) AccountKeys { return account.NewKeys(domain) }

// CredentialFieldOwner is the field manager of everything the credential-controller writes.
const CredentialFieldOwner = account.FieldOwner

// controllerIdentity is the "by" of operations the controller performs itself.
const controllerIdentity = ControllerName

// writer is the one writer of account Secrets and kept passwords
// (internal/account), reading uncached through APIReader.
func (r *CredentialAccountReconciler) writer() *account.Writer {
	return &account.Writer{Client: r.Client, Reader: r.APIReader, Keys: r.AccountKeys,
		PlatformNamespace: r.PlatformNamespace, Now: r.now}
}

// created reports the outcome of the writer's create of acct's Secret s:
// a Secret of the name found there is a NameCollision for a tenant account
// (a platform account retries, and reclaims it); a new one is counted and
// recorded in an event.
func (r *CredentialAccountReconciler) created(acct *credv1.CredentialAccount, s *corev1.Secret, err error) (*corev1.Secret, error) {
	name := acct.SecretName()
	switch {
	case errors.Is(err, account.ErrExists) && acct.GetOwner() == credv1.OwnerPlatform:
		// Still being deleted, or planted meanwhile: the next attempt reclaims it.
		return nil, fmt.Errorf("creating Secret %s: it exists again; retrying", name)
	case errors.Is(err, account.ErrExists):
		return nil, reconciler.NewStalling(credv1.NameCollisionReason, "Secret %s was created by someone else", name)
	case err != nil:
		return nil, r.refusal(acct, err)
	}
	metrics.AccountSecretCreated(acct.Namespace)
	until := ""
	if release := s.Annotations[r.AccountKeys.AwaitingRelease()]; release != "" {
		until = fmt.Sprintf(", owned by the CredentialAccount until HelmRelease %s exists", release)
	}
	r.EventRecorder.AnnotatedEventf(acct, nil, account.EventMetadata(acct), corev1.EventTypeNormal, credv1.SecretCreatedReason, eventActionAccount,
		"created Secret %s (%s)%s", name, s.Annotations[r.AccountKeys.Origin], until)
	return s, nil
}

// refusal gives the writer's refusals their reasons: a verifier the format
// cannot compute, a kept password of another account. Any other error is
// returned as it is, and retried.
func (r *CredentialAccountReconciler) refusal(acct *credv1.CredentialAccount, err error) error {
	var formatErr *account.FormatError
	switch {
	case errors.As(err, &formatErr):
		return reconciler.NewStalling(credv1.UnknownFormatReason, "%s", formatErr.Error())
	case errors.Is(err, account.ErrKeptClaimed):
		return reconciler.NewStalling(credv1.KeptPasswordCollisionReason,
			"the kept password %s/%s belongs to another CredentialAccount; it is left untouched", r.PlatformNamespace, account.KeptSecretName(acct))
	}
	return err
}

func (r *CredentialAccountReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// binding is what the kept password of the platform account acct of hr is
// bound to; pending (the namespace and the release's name) while there is
// no release (hr nil).
func (r *CredentialAccountReconciler) binding(ctx context.Context, acct *credv1.CredentialAccount, hr *helmv2.HelmRelease) (*account.Binding, error) {
	ns := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}
	if err := r.Get(ctx, client.ObjectKey{Name: acct.Namespace}, ns); err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", acct.Namespace, err)
	}
	if hr == nil {
		return account.NewPendingBinding(ns.UID, types.NamespacedName{Namespace: acct.Namespace, Name: acct.Spec.Release}), nil
	}
	return account.NewBinding(ns.UID, hr), nil
}

const (
	// accountSecretIndex indexes CredentialAccounts by the name of their
	// Secret, <release>.<dns(username)>.account, computed from the spec.
	accountSecretIndex = "accountSecretName"
	// accountReleaseIndex indexes CredentialAccounts by spec.release.
	accountReleaseIndex = ".spec.release"
)

func (r *CredentialAccountReconciler) accountsBy(ctx context.Context, ns, index, value string) []reconcile.Request {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{index: value}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing CredentialAccounts", "index", index)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, a := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&a)})
	}
	return reqs
}
