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
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
	"github.com/credo-dev/credo/internal/metrics"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// No finalizer holds anything in a tenant namespace. What an account leaves
// behind is bound to it by UID instead, and swept:
//
//   - its account Secret, in the tenant namespace (its valuesFrom entry goes
//     with it), when the account is deleted; a Secret also goes with its
//     HelmRelease by garbage collection, and with its namespace;
//   - a platform account's kept password, in the platform namespace, when
//     the account, its tenant namespace or its HelmRelease is gone (the
//     kept password records their UIDs: internal/account/binding.go); one
//     kept before its release existed (pending) goes with its account or
//     namespace only.
//
// The sweep runs for one account when its deletion is seen, and over every
// record at start-up and every SweepInterval: that is the recovery path
// when accounts, namespaces or releases went while the controller was down.
// Liveness is read uncached, cluster-wide, so that a shard never sweeps the
// records of another shard's accounts. Only Secrets credo wrote, carrying an
// account's UID, are deleted, each with its UID and resourceVersion as
// preconditions.

// DefaultSweepInterval is how often every record is checked.
const DefaultSweepInterval = 10 * time.Minute

// sweepLoop sweeps every record at start-up and every interval, on the
// leader only.
type sweepLoop struct {
	r        *CredentialAccountReconciler
	interval time.Duration
}

// NeedLeaderElection: one replica sweeps.
func (l sweepLoop) NeedLeaderElection() bool { return true }

// Start sweeps until ctx is done; a failed sweep is logged and retried at
// the next tick.
func (l sweepLoop) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("sweep")
	if err := l.r.dropLegacyFinalizers(ctx); err != nil {
		log.Error(err, "removing the finalizer earlier versions put on CredentialAccounts")
	}
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		if n, err := l.r.sweepAll(ctx); err != nil {
			log.Error(err, "sweeping records of deleted accounts, namespaces and releases", "deleted", n)
		} else if n > 0 {
			log.Info("swept records of deleted accounts, namespaces and releases", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// dropLegacyFinalizers removes LegacyFinalizer from every account of the
// shard at start-up, the suspended ones included, which are not reconciled
// (an account being deleted is: its Finalize step removes it).
func (r *CredentialAccountReconciler) dropLegacyFinalizers(ctx context.Context) error {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list); err != nil {
		return fmt.Errorf("listing CredentialAccounts: %w", err)
	}
	var errs []error
	for i := range list.Items {
		errs = append(errs, r.dropLegacyFinalizer(ctx, &list.Items[i]))
	}
	return errors.Join(errs...)
}

// liveSet is the UIDs of the objects of one kind that exist.
type liveSet map[types.UID]bool

// live lists the objects of kind (as metadata, uncached) in namespace ns
// (all namespaces when empty) and returns their UIDs.
func (r *CredentialAccountReconciler) live(ctx context.Context, gvk metav1.TypeMeta, ns string) (liveSet, error) {
	list := &metav1.PartialObjectMetadataList{TypeMeta: gvk}
	if err := r.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	out := make(liveSet, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].UID] = true
	}
	return out, nil
}

var (
	accountsMeta   = metav1.TypeMeta{APIVersion: credv1.GroupVersion.String(), Kind: credv1.CredentialAccountKind + "List"}
	namespacesMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "NamespaceList"}
	releasesMeta   = metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind + "List"}
	secretsMeta    = metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}
)

// records lists, as metadata with their managed fields, uncached, the
// Secrets of namespace ns (all when empty) that carry the account label
// (with value, when not empty).
func (r *CredentialAccountReconciler) records(ctx context.Context, ns, value string) ([]metav1.PartialObjectMetadata, error) {
	op, vals := selection.Exists, []string(nil)
	if value != "" {
		op, vals = selection.Equals, []string{value}
	}
	req, err := labels.NewRequirement(r.AccountKeys.Account, op, vals)
	if err != nil {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{TypeMeta: secretsMeta}
	if err := r.APIReader.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
		return nil, fmt.Errorf("listing account Secrets: %w", err)
	}
	return list.Items, nil
}

// sweepAccount sweeps what the CredentialAccount key left behind, once it
// is gone: its account Secret and its kept password, when they carry the
// UID of no account of the namespace.
func (r *CredentialAccountReconciler) sweepAccount(ctx context.Context, key types.NamespacedName) error {
	// Records first, then the accounts: an account whose record is listed
	// existed before it, and is in the list that follows unless it is gone.
	secrets, err := r.records(ctx, key.Namespace, account.LabelValue(key.Name))
	if err != nil {
		return err
	}
	var kept []metav1.PartialObjectMetadata
	if r.PlatformNamespace != "" {
		if kept, err = r.records(ctx, r.PlatformNamespace, account.LabelValue(key.Namespace+"."+key.Name)); err != nil {
			return err
		}
	}
	if len(secrets) == 0 && len(kept) == 0 {
		return nil
	}
	accounts, err := r.live(ctx, accountsMeta, key.Namespace)
	if err != nil {
		return err
	}
	var errs []error
	for i := range secrets {
		if r.orphaned(&secrets[i], accounts) {
			_, err := r.sweepAccountSecret(ctx, &secrets[i])
			errs = append(errs, err)
		}
	}
	for i := range kept {
		if r.orphaned(&kept[i], accounts) {
			_, err := r.sweepKept(ctx, &kept[i], key.Namespace, metrics.SweptAccountDeleted)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// orphaned reports whether s carries the UID of no account in accounts.
func (r *CredentialAccountReconciler) orphaned(s *metav1.PartialObjectMetadata, accounts liveSet) bool {
	uid := types.UID(s.Annotations[r.AccountKeys.AccountUID])
	return uid != "" && !accounts[uid]
}

// sweepAll sweeps every record whose account, namespace or release is
// gone, and returns how many it deleted.
func (r *CredentialAccountReconciler) sweepAll(ctx context.Context) (int, error) {
	secrets, err := r.records(ctx, "", "")
	if err != nil {
		return 0, err
	}
	accounts, err := r.live(ctx, accountsMeta, "")
	if err != nil {
		return 0, err
	}
	namespaces, err := r.live(ctx, namespacesMeta, "")
	if err != nil {
		return 0, err
	}
	releases, err := r.live(ctx, releasesMeta, "")
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for i := range secrets {
		s := &secrets[i]
		var (
			deleted bool
			err     error
		)
		switch {
		case s.Namespace != r.PlatformNamespace:
			if !r.orphaned(s, accounts) {
				continue
			}
			deleted, err = r.sweepAccountSecret(ctx, s)
		default:
			ns, why := r.keptGone(s, accounts, namespaces, releases)
			if why == "" {
				continue
			}
			deleted, err = r.sweepKept(ctx, s, ns, why)
		}
		if deleted {
			n++
		}
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// keptGone says why the kept password s is swept (a metrics.Swept*
// reason): its tenant namespace, its release or its account is gone; ""
// when all are there. ns is its account's namespace. A pending record,
// kept before its release existed, is bound to its account alone (and its
// namespace) until the release adopts it: no release is gone.
func (r *CredentialAccountReconciler) keptGone(s *metav1.PartialObjectMetadata, accounts, namespaces, releases liveSet) (ns, why string) {
	// A kept password is named <namespace>.<account Secret>, and a
	// namespace name has no dot.
	ns, _, _ = strings.Cut(s.Name, ".")
	if b, ok := r.AccountKeys.BindingOf(s); ok {
		switch {
		case !namespaces[b.NamespaceUID]:
			return b.Release.Namespace, metrics.SweptNamespaceDeleted
		case !b.Pending() && !releases[b.ReleaseUID]:
			return b.Release.Namespace, metrics.SweptReleaseDeleted
		}
	}
	if r.orphaned(s, accounts) {
		return ns, metrics.SweptAccountDeleted
	}
	return ns, ""
}

// sweepKept deletes the kept password s of an account of namespace ns,
// for reason (a metrics.Swept* reason), and reports whether it did.
func (r *CredentialAccountReconciler) sweepKept(ctx context.Context, s *metav1.PartialObjectMetadata, ns, reason string) (bool, error) {
	if deleted, err := r.writer().DeleteRecord(ctx, s); !deleted || err != nil {
		return false, err
	}
	metrics.RecordSwept(ns, reason)
	ctrl.LoggerFrom(ctx).Info("deleted a kept platform password", "secret", client.ObjectKeyFromObject(s), "reason", reason)
	return true, nil
}

// sweepAccountSecret deletes the account Secret s of a deleted account,
// and its valuesFrom entry from the HelmRelease that owns it, and reports
// whether it did.
func (r *CredentialAccountReconciler) sweepAccountSecret(ctx context.Context, s *metav1.PartialObjectMetadata) (bool, error) {
	if !account.ManagedByCredo(s) {
		return false, nil
	}
	for _, ref := range s.OwnerReferences {
		if ref.Kind == helmv2.HelmReleaseKind {
			if err := r.dropValuesEntry(ctx, client.ObjectKey{Namespace: s.Namespace, Name: ref.Name}, s.Name); err != nil {
				return false, err
			}
		}
	}
	if deleted, err := r.writer().DeleteRecord(ctx, s); !deleted || err != nil {
		return false, err
	}
	metrics.RecordSwept(s.Namespace, metrics.SweptAccountDeleted)
	ctrl.LoggerFrom(ctx).Info("deleted the Secret of a deleted CredentialAccount", "secret", client.ObjectKeyFromObject(s))
	return true, nil
}
