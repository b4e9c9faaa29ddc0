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

// Package migrate adopts the credentials a chart rendered in plaintext into
// <release>-credentials (key: username, value: password), as the review of
// the user-secrets API agreed: each declared tenant account's Secret gets
// the verifier of its password, origin Migrated, marked previously exposed
// until the next mint; each platform account whose password the tenant
// could read there is rotated once. Every write goes through
// internal/account's Writer (a forced server-side apply under credo's field
// manager, on the version read). Releases that cannot be migrated are
// skipped whole and listed in a ConfigMap in the platform namespace.
//
// Plaintext passwords are read into memory from <release>-credentials and
// nowhere else; no result, error or report of this package holds one, nor a
// verifier.
package migrate

import (
	"context"
	"fmt"
	"sort"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// Options configure a run.
type Options struct {
	// Client reads and writes, uncached.
	Client client.Client
	// Keys are the account Secrets' annotation keys.
	Keys account.Keys
	// PlatformNamespace holds the kept platform passwords and the report.
	PlatformNamespace string
	// CredentialsSuffix names a release's chart-rendered Secret:
	// <release><suffix>; default DefaultCredentialsSuffix.
	CredentialsSuffix string
	// ReportConfigMap is the ConfigMap listing skipped releases, in
	// PlatformNamespace; default DefaultReportConfigMap.
	ReportConfigMap string
	// Namespace limits the run to one namespace; empty: every namespace.
	Namespace string
	// Release limits the run to one release name; empty: every release.
	Release string
	// Apply writes; without it the run only plans.
	Apply bool
	// Phase is the part of the migration run; default PhaseAll.
	Phase Phase
	// By is who the account history records the migration by.
	By string
	// Now is the time the writes record; time.Now when nil.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultCredentialsSuffix = "-credentials"
	DefaultReportConfigMap   = "credo-migration"
	// DefaultBy is the history's name of the migration when the caller's
	// identity is unknown.
	DefaultBy = "credo-migrate"
)

// Result is what a run did, or would do.
type Result struct {
	// Releases in scope, by namespace and name.
	Releases []Release
	// Listed is the report ConfigMap's data after the run (as it would be,
	// on a dry run): <namespace>.<release> → "<Reason>: <message>".
	Listed map[string]string
	// Applied tells whether the run wrote.
	Applied bool
}

// Run plans every release in scope that has CredentialAccounts and, with
// Apply, carries out the plan and writes the report ConfigMap. An error is
// returned only when the run cannot proceed at all (a list or the report
// failed); a release that fails is skipped and listed.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	groups, err := o.accounts(ctx)
	if err != nil {
		return nil, err
	}
	res := &Result{Applied: o.Apply}
	w := &account.Writer{Client: o.Client, Keys: o.Keys, PlatformNamespace: o.PlatformNamespace, Now: o.Now}
	for _, g := range groups {
		st, err := o.read(ctx, w, g)
		if err != nil {
			return nil, err
		}
		r := plan(o.Keys, o.Phase, st)
		if o.Apply && r.Skip == nil {
			// The kept passwords of the platform accounts it rotates are
			// bound to the namespace and the release, as the controller's.
			bound := *w
			bound.Binding = account.NewBinding(st.namespaceUID, st.hr)
			o.apply(ctx, &bound, &r, st.hr, st.credentials, st.isLive)
		}
		res.Releases = append(res.Releases, r)
	}
	if res.Listed, err = o.report(ctx, res.Releases); err != nil {
		return nil, err
	}
	return res, nil
}

func (o *Options) defaults() {
	if o.CredentialsSuffix == "" {
		o.CredentialsSuffix = DefaultCredentialsSuffix
	}
	if o.ReportConfigMap == "" {
		o.ReportConfigMap = DefaultReportConfigMap
	}
	if o.Phase == "" {
		o.Phase = PhaseAll
	}
	if o.By == "" {
		o.By = DefaultBy
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// group is the CredentialAccounts of one release.
type group struct {
	namespace, release string
	accounts           []*credv1.CredentialAccount
}

// accounts lists the CredentialAccounts in scope, grouped by release, in
// order of namespace, release and account name.
func (o *Options) accounts(ctx context.Context) ([]group, error) {
	var list credv1.CredentialAccountList
	var opts []client.ListOption
	if o.Namespace != "" {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	if err := o.Client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing CredentialAccounts: %w", err)
	}
	byRelease := map[[2]string]*group{}
	var groups []*group
	for i := range list.Items {
		a := &list.Items[i]
		if o.Release != "" && a.Spec.Release != o.Release {
			continue
		}
		k := [2]string{a.Namespace, a.Spec.Release}
		g := byRelease[k]
		if g == nil {
			g = &group{namespace: a.Namespace, release: a.Spec.Release}
			byRelease[k] = g
			groups = append(groups, g)
		}
		g.accounts = append(g.accounts, a)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].namespace != groups[j].namespace {
			return groups[i].namespace < groups[j].namespace
		}
		return groups[i].release < groups[j].release
	})
	out := make([]group, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g.accounts, func(i, j int) bool { return g.accounts[i].Name < g.accounts[j].Name })
		out = append(out, *g)
	}
	return out, nil
}

// read reads what the plan of g needs: the HelmRelease, its Namespace's UID,
// <release>-credentials and the account Secrets, uncached.
func (o *Options) read(ctx context.Context, w *account.Writer, g group) (state, error) {
	st := state{namespace: g.namespace, name: g.release, accounts: g.accounts,
		credentialsName: g.release + o.CredentialsSuffix, secrets: map[string]*corev1.Secret{},
		referenced: map[string]*corev1.Secret{}, rendered: map[string]bool{}, unreadable: map[string]string{}, live: map[string]bool{}}
	hr := &helmv2.HelmRelease{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: g.namespace, Name: g.release}, hr); err != nil {
		if !apierrors.IsNotFound(err) {
			return st, fmt.Errorf("reading HelmRelease %s/%s: %w", g.namespace, g.release, err)
		}
		return st, nil
	}
	st.hr = hr
	ns := &corev1.Namespace{}
	if err := o.Client.Get(ctx, client.ObjectKey{Name: g.namespace}, ns); err != nil {
		return st, fmt.Errorf("reading Namespace %s: %w", g.namespace, err)
	}
	st.namespaceUID = ns.UID
	creds := &corev1.Secret{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: g.namespace, Name: st.credentialsName}, creds); err != nil {
		if !apierrors.IsNotFound(err) {
			return st, fmt.Errorf("reading Secret %s/%s: %w", g.namespace, st.credentialsName, err)
		}
	} else {
		st.credentials = creds
	}
	for _, a := range g.accounts {
		s, err := w.Read(ctx, a)
		if err != nil {
			return st, fmt.Errorf("in %s: %w", g.namespace, err)
		}
		st.secrets[a.Name] = s
		ref := secretRef(a)
		if ref == nil {
			continue
		}
		if st.referenced[a.Name], err = w.ReadReferenced(ctx, a); err != nil {
			return st, fmt.Errorf("in %s: %w", g.namespace, err)
		}
		if o.Phase == PhaseAll {
			if st.rendered[a.Name], err = rendersSecret(ctx, o.Client, hr, g.namespace, ref.Name); err != nil {
				st.unreadable[a.Name] = err.Error()
			}
		}
		if len(st.live) == 0 {
			// An adopted Secret's account may be of another release.
			var all credv1.CredentialAccountList
			if err := o.Client.List(ctx, &all, client.InNamespace(g.namespace)); err != nil {
				return st, fmt.Errorf("listing the CredentialAccounts of %s: %w", g.namespace, err)
			}
			for _, x := range all.Items {
				st.live[string(x.UID)] = true
			}
		}
	}
	return st, nil
}

// apply carries out r's steps, in order. A write that fails skips the
// release (its steps after it are not attempted); what was written stays,
// and a re-run finds it done.
func (o *Options) apply(ctx context.Context, w *account.Writer, r *Release, hr *helmv2.HelmRelease, creds *corev1.Secret, live func(string) bool) {
	for _, s := range r.Steps {
		var err error
		switch s.Action {
		case ActionMigrate:
			_, err = w.StoreMigrated(ctx, s.acct, s.secret, s.format, string(creds.Data[s.Username]), o.By)
		case ActionRotate:
			err = o.rotate(ctx, w, s)
		case ActionKeep:
			_, err = w.KeepFromHelm(ctx, hr, s.referenced)
		case ActionAdopt:
			// Adopted first, so that the credential-controller, woken by
			// the rotation, writes the new password into the key.
			if _, err = w.Adopt(ctx, s.acct, hr, s.referenced, live); err == nil && s.rotate {
				err = o.rotate(ctx, w, s)
			}
		default:
			continue
		}
		if err != nil {
			r.Skip = &Skip{Reason: WriteFailedReason, Message: fmt.Sprintf("CredentialAccount %s (%s): %v", s.Account, s.Action, err)}
			return
		}
	}
}

// rotate gives the platform account of s a new password, recorded as the
// migration's rotation.
func (o *Options) rotate(ctx context.Context, w *account.Writer, s Step) error {
	_, _, err := w.NewPassword(ctx, s.acct, s.secret, s.format, account.Record{
		Origin: credv1.OriginGenerated, By: o.By, Rotate: s.acct.Spec.Rotate, MigratedRotation: true})
	return err
}
