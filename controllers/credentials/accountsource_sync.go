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
	"strconv"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// sync creates, updates and deletes the source's accounts, in four steps:
// index what exists, derive what the selected releases want, bring the
// existing accounts in line (update or prune), create the rest. A problem
// of one release (unreadable values, a refused username, an account in
// conflict, a limit) is told to the release and never stops the others.
func (r *AccountSourceReconciler) sync(ctx context.Context, src *credv1.AccountSource) error {
	var existing credv1.CredentialAccountList
	if err := r.List(ctx, &existing, client.MatchingLabels{credv1.SourceLabel: src.Name}); err != nil {
		return fmt.Errorf("listing generated accounts: %w", err)
	}
	idx := indexAccounts(existing.Items)
	d, err := r.derive(ctx, src, idx)
	if err != nil {
		return err
	}
	src.Status.MatchedReleases = d.matched
	count, errs, err := r.bringInLine(ctx, existing.Items, d)
	if err != nil {
		return err
	}
	created, refused, err := r.createAll(ctx, src, d.desired, d.releases)
	count += created
	d.problems = append(d.problems, refused...)
	if err != nil {
		errs = append(errs, err)
	}
	src.Status.Accounts = count
	r.report(src, d.releases, append(d.problems, d.unresolved...))
	return errors.Join(errs...)
}

// accountIndex is what a source's existing accounts tell derive.
type accountIndex struct {
	// held holds, per namespace/release, the "<entry>/<username>" of the
	// source's existing accounts.
	held map[string]map[string]bool
	// named is the account of each identity: the name it has (a platform
	// account may have taken a name of its own, see create).
	named map[string]*credv1.CredentialAccount
}

func indexAccounts(existing []credv1.CredentialAccount) accountIndex {
	idx := accountIndex{held: map[string]map[string]bool{}, named: map[string]*credv1.CredentialAccount{}}
	for i := range existing {
		a := existing[i]
		rel := a.Namespace + "/" + a.Labels[credv1.ReleaseLabel]
		if idx.held[rel] == nil {
			idx.held[rel] = map[string]bool{}
		}
		idx.held[rel][a.Labels[entryLabel]+"/"+a.Spec.Username] = true
		// Of two accounts of one identity (a fallback name and the own
		// name, across a shard hand-over), the older keeps it.
		if other, ok := idx.named[identity(&a)]; !ok || olderThan(&a, other) {
			idx.named[identity(&a)] = &a
		}
	}
	return idx
}

// plan is what the releases a source selects want.
type plan struct {
	// desired are the accounts to have, by key.
	desired map[client.ObjectKey]*credv1.CredentialAccount
	// releases are every release listed, by key.
	releases map[client.ObjectKey]*helmv2.HelmRelease
	// keep holds (namespace/release, entry) pairs whose values were
	// unreadable, and namespace/release of releases whose chart could not
	// be resolved or that a limit holds: their accounts stay as they are.
	keep    map[string]bool
	matched int32
	// problems are told to their releases; unresolved come after every
	// other problem: a release whose chart cannot be read (which any
	// tenant can cause for its own release) never hides what the source
	// refused elsewhere.
	problems, unresolved []problem
}

// kept reports whether cur, which no release wants, is to stay as it is.
func (d *plan) kept(cur *credv1.CredentialAccount) bool {
	rel := cur.Namespace + "/" + cur.Labels[credv1.ReleaseLabel]
	return d.keep[rel] || d.keep[rel+"/"+cur.Labels[entryLabel]]
}

// derive lists the releases, and derives the accounts of each one the
// source selects from its values.
func (r *AccountSourceReconciler) derive(ctx context.Context, src *credv1.AccountSource, idx accountIndex) (*plan, error) {
	var hrs helmv2.HelmReleaseList
	if err := r.List(ctx, &hrs); err != nil {
		return nil, fmt.Errorf("listing HelmReleases: %w", err)
	}
	paths := valuesPaths(src)
	listed := make(map[client.ObjectKey]bool, len(hrs.Items))
	d := &plan{
		desired:  map[client.ObjectKey]*credv1.CredentialAccount{},
		releases: map[client.ObjectKey]*helmv2.HelmRelease{},
		keep:     map[string]bool{},
	}
	var derived []*credv1.CredentialAccount
	for i := range hrs.Items {
		hr := &hrs.Items[i]
		rel := hr.Namespace + "/" + hr.Name
		d.releases[client.ObjectKeyFromObject(hr)] = hr
		listed[client.ObjectKeyFromObject(hr)] = true
		ok, err := r.ruleOf(src).Selects(ctx, r.Client, hr, nil)
		var unresolved *release.UnresolvedError
		switch {
		case errors.As(err, &unresolved):
			msg := fmt.Sprintf("the chart of chartRef %s cannot be resolved: %v", unresolved.Ref, unresolved.Err)
			if len(idx.held[rel]) > 0 {
				msg += "; its accounts are kept"
			}
			d.unresolved = append(d.unresolved, problem{credv1.ChartUnresolvedReason, unresolved.Release, msg})
			d.keep[rel] = true
			continue
		case err != nil:
			return nil, fmt.Errorf("%w: %w", errInvalidSelector, err)
		}
		if !ok || !hr.DeletionTimestamp.IsZero() {
			continue
		}
		keys, err := r.values.keysAt(ctx, hr, paths)
		switch {
		case apierrors.IsNotFound(err) || errors.Is(err, errReleaseReplaced):
			// Gone since the cache listed it; its event brings it up to date.
			d.keep[rel] = true
			continue
		case err != nil:
			return nil, err
		}
		d.matched++
		want, err := desiredAccounts(src, hr, keys, idx.held[rel])
		if err != nil {
			return nil, err
		}
		if p := r.Limits.perRelease(hr, len(want.accounts)); p != nil {
			// Nothing of the release changes: all of its accounts or none.
			d.problems = append(d.problems, *p)
			d.keep[rel] = true
			continue
		}
		d.problems = append(d.problems, want.problems...)
		for _, e := range want.invalid {
			d.keep[rel+"/"+strconv.Itoa(e)] = true
		}
		for _, a := range want.accounts {
			if cur, ok := idx.named[identity(a)]; ok {
				a.Name = cur.Name
			}
			r.Shard.Stamp(a, hr)
			derived = append(derived, a)
		}
	}
	r.values.retain(listed)
	d.claimNames(derived)
	return d, nil
}

// claimNames makes the derived accounts desired, one per name. Two
// releases of a namespace can derive one account name (release "a-b" with
// user "c", release "a" with user "b-c"): a platform account's name is
// taken first, then the first by name; the other is refused.
func (d *plan) claimNames(derived []*credv1.CredentialAccount) {
	sort.SliceStable(derived, func(i, j int) bool {
		pi, pj := derived[i].Spec.Owner == credv1.OwnerPlatform, derived[j].Spec.Owner == credv1.OwnerPlatform
		if pi != pj {
			return pi
		}
		return derived[i].Namespace+"/"+derived[i].Spec.Release < derived[j].Namespace+"/"+derived[j].Spec.Release
	})
	for _, a := range derived {
		key := client.ObjectKeyFromObject(a)
		if other, taken := d.desired[key]; taken {
			d.problems = append(d.problems, problem{credv1.UsernameRefusedReason, releaseOf(a), fmt.Sprintf(
				"username %s has the account name %s of release %s; no account is created for it",
				quoteKey(a.Spec.Username), a.Name, other.Spec.Release)})
			continue
		}
		d.desired[key] = a
	}
}

// bringInLine updates each existing account that is desired, prunes the
// ones no release wants (unless kept, or handed over to another shard with
// their release), and takes both out of d.desired, which then holds what
// is to be created. It returns how many accounts the source has, the
// errors of single accounts, and a failed hand-over, which stops the sync.
func (r *AccountSourceReconciler) bringInLine(ctx context.Context, existing []credv1.CredentialAccount, d *plan) (int32, []error, error) {
	var count int32
	var errs []error
	for i := range existing {
		cur := &existing[i]
		key := client.ObjectKeyFromObject(cur)
		want, ok := d.desired[key]
		switch {
		case !ok && d.kept(cur):
			count++
		case !ok:
			// Its release may have moved to another shard: the account goes with it.
			moved, err := r.handOver(ctx, cur)
			if err != nil {
				return count, errs, err
			}
			if !moved {
				if err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
					errs = append(errs, fmt.Errorf("deleting account %s/%s: %w", cur.Namespace, cur.Name, err))
				}
			}
		case squats(cur, want):
			p, err := r.makeWay(ctx, cur, want)
			d.problems = append(d.problems, *p)
			if err != nil {
				errs = append(errs, err)
			}
			delete(d.desired, key)
		default:
			delete(d.desired, key)
			if p := conflict(cur, want); p != nil {
				d.problems = append(d.problems, *p)
				continue
			}
			count++
			if err := r.update(ctx, cur, want); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return count, errs, nil
}
