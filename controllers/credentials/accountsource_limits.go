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
	"sort"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// The limits' defaults. A release's values are its tenant's to write, and
// an AccountSource turns every key into a CredentialAccount and a Secret
// of the tenant's namespace (3,000 keys took 47 s of the controller); every
// platform account also keeps its password in the platform namespace,
// where no quota of the tenant's counts it.
const (
	// DefaultMaxAccountsPerRelease is how many accounts one AccountSource
	// generates for one release at most.
	DefaultMaxAccountsPerRelease = 64
	// DefaultMaxAccountsPerNamespace is how many generated accounts (of
	// every AccountSource) a namespace may have before no more are created.
	DefaultMaxAccountsPerNamespace = 512
	// DefaultMaxPlatformAccountsPerNamespace is how many platform accounts
	// (each a kept password in the platform namespace) a namespace may have
	// before no more are generated.
	DefaultMaxPlatformAccountsPerNamespace = 64
)

// limitOrDefault is the limit o asks for: def when zero, none (0) when
// negative.
func limitOrDefault(o, def int) int {
	switch {
	case o == 0:
		return def
	case o < 0:
		return 0
	}
	return o
}

// perRelease refuses a release that derives n accounts, more than one
// release may have.
func (l Limits) perRelease(hr *helmv2.HelmRelease, n int) *problem {
	if l.PerRelease <= 0 || n <= l.PerRelease {
		return nil
	}
	return &problem{credv1.AccountLimitExceededReason, client.ObjectKeyFromObject(hr), fmt.Sprintf(
		"it derives %d accounts, more than the %d one release may have (--max-generated-accounts-per-release): "+
			"none of its accounts is created, changed or deleted until its values derive at most %d", n, l.PerRelease, l.PerRelease)}
}

// namespaceCounts are a namespace's generated and platform accounts.
type namespaceCounts struct{ generated, platform int }

// countNamespace counts the accounts of ns, read uncached: the cache may
// not hold the accounts just created, nor those of another shard.
func (r *AccountSourceReconciler) countNamespace(ctx context.Context, ns string) (namespaceCounts, error) {
	var list credv1.CredentialAccountList
	if err := r.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return namespaceCounts{}, fmt.Errorf("counting the accounts of namespace %s: %w", ns, err)
	}
	var c namespaceCounts
	for i := range list.Items {
		a := &list.Items[i]
		if _, ok := a.Labels[credv1.SourceLabel]; ok {
			c.generated++
		}
		if a.GetOwner() == credv1.OwnerPlatform {
			c.platform++
		}
	}
	return c, nil
}

// createAll creates the new accounts of each release, all of a release's
// or none: a release whose new accounts would take its namespace over a
// limit gets none of them (and keeps the accounts it has). Within a
// namespace, older releases come first. It returns how many accounts the
// source now has of those it created, and the problems of the releases.
func (r *AccountSourceReconciler) createAll(ctx context.Context, src *credv1.AccountSource, desired map[client.ObjectKey]*credv1.CredentialAccount,
	releases map[client.ObjectKey]*helmv2.HelmRelease) (int32, []problem, error) {
	byRelease := map[client.ObjectKey][]*credv1.CredentialAccount{}
	for _, a := range desired {
		byRelease[releaseOf(a)] = append(byRelease[releaseOf(a)], a)
	}
	order := make([]client.ObjectKey, 0, len(byRelease))
	for k := range byRelease {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		ha, hb := releases[a], releases[b]
		if ha != nil && hb != nil && !ha.CreationTimestamp.Equal(&hb.CreationTimestamp) {
			return ha.CreationTimestamp.Before(&hb.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	var count int32
	var problems []problem
	var errs []error
	counts := map[string]*namespaceCounts{}
	for _, rel := range order {
		accounts := byRelease[rel]
		sort.Slice(accounts, func(i, j int) bool { return accounts[i].Name < accounts[j].Name })
		if r.Limits.PerNamespace > 0 || r.Limits.PlatformPerNamespace > 0 {
			c := counts[rel.Namespace]
			if c == nil {
				n, err := r.countNamespace(ctx, rel.Namespace)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				c = &n
				counts[rel.Namespace] = c
			}
			if p := r.Limits.perNamespace(rel, *c, accounts); p != nil {
				problems = append(problems, *p)
				continue
			}
			for _, a := range accounts {
				c.generated++
				if a.Spec.Owner == credv1.OwnerPlatform {
					c.platform++
				}
			}
		}
		for _, a := range accounts {
			p, err := r.create(ctx, src, a)
			switch {
			case p != nil:
				problems = append(problems, *p)
			case err != nil:
				errs = append(errs, err)
			default:
				count++
			}
		}
	}
	return count, problems, errors.Join(errs...)
}

// perNamespace refuses the new accounts of release rel when they would take
// its namespace, with counts c, over a limit.
func (l Limits) perNamespace(rel client.ObjectKey, c namespaceCounts, accounts []*credv1.CredentialAccount) *problem {
	platform := 0
	for _, a := range accounts {
		if a.Spec.Owner == credv1.OwnerPlatform {
			platform++
		}
	}
	var over string
	switch {
	case l.PerNamespace > 0 && c.generated+len(accounts) > l.PerNamespace:
		over = fmt.Sprintf("its %d new account(s) would take namespace %s to %d generated accounts, more than the %d a namespace may have "+
			"(--max-generated-accounts-per-namespace)", len(accounts), rel.Namespace, c.generated+len(accounts), l.PerNamespace)
	case l.PlatformPerNamespace > 0 && platform > 0 && c.platform+platform > l.PlatformPerNamespace:
		over = fmt.Sprintf("its %d new platform account(s) would take namespace %s to %d platform accounts, more than the %d a namespace may have "+
			"(--max-platform-accounts-per-namespace; each keeps a password in the platform namespace)",
			platform, rel.Namespace, c.platform+platform, l.PlatformPerNamespace)
	default:
		return nil
	}
	return &problem{credv1.AccountLimitExceededReason, rel, over + ": none of them is created; its other accounts are kept"}
}
