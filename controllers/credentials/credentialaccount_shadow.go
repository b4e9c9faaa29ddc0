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
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// How helm-controller composes a release's values (fluxcd/pkg/chartutil
// ChartValuesFromReferences, as of helm-controller v1.6): the valuesFrom
// entries in order, each targetPath entry written into the values composed
// so far (with spec.values merged in first), then spec.values merged over
// the result. Which value wins at a path that several sources set depends
// on that order and on which maps the merges share: an entry earlier in
// the list, a later one, or spec.values may win. An account's value is
// certain only when its entry comes before every entry credo did not
// write and no such entry names its path or a path inside or around it.
// credo keeps its entries so (placeValues), and believes what was
// deployed, not the order (deployedValue, in releaseApplied).

// accountEntries are the valuesFrom entries the accounts of hr deliver,
// by Secret name: the entries credo writes. An entry naming a Secret that
// no account of hr has is not credo's, whatever its name.
func (r *CredentialAccountReconciler) accountEntries(ctx context.Context, hr *helmv2.HelmRelease) (map[string]helmv2.ValuesReference, error) {
	var list credv1.CredentialAccountList
	if err := r.List(ctx, &list, client.InNamespace(hr.Namespace), client.MatchingFields{accountReleaseIndex: hr.Name}); err != nil {
		return nil, fmt.Errorf("listing the accounts of HelmRelease %s: %w", hr.Name, err)
	}
	out := map[string]helmv2.ValuesReference{}
	for i := range list.Items {
		if a := &list.Items[i]; a.Spec.ValuesFrom != nil && a.DeletionTimestamp.IsZero() {
			out[a.SecretName()] = valuesRef(a)
		}
	}
	return out, nil
}

// isAccountEntry reports whether v is the entry of one of accounts.
func isAccountEntry(v helmv2.ValuesReference, accounts map[string]helmv2.ValuesReference) bool {
	want, ok := accounts[v.Name]
	v.Optional = false
	return ok && v == want
}

// placement is how a release's valuesFrom carries one account's entry.
type placement struct {
	// carried: the entry is in the list.
	carried bool
	// behind names the entries credo did not write that come before it.
	behind []string
	// overlapping names the other entries credo did not write whose
	// targetPath is the account's, or a path inside or around it.
	overlapping []string
}

// placementOf reads how hr's valuesFrom carries want, among the entries
// of accounts (which include want).
func placementOf(hr *helmv2.HelmRelease, want helmv2.ValuesReference, accounts map[string]helmv2.ValuesReference) placement {
	var p placement
	for _, v := range hr.Spec.ValuesFrom {
		if isAccountEntry(v, accounts) {
			if v.Name == want.Name {
				p.carried = true
			}
			continue
		}
		if !p.carried {
			p.behind = append(p.behind, describeEntry(v))
		}
		if v.TargetPath != "" && pathsOverlap(v.TargetPath, want.TargetPath) {
			p.overlapping = append(p.overlapping, describeEntry(v))
		}
	}
	return p
}

// good reports whether the entry is carried, before every entry credo did
// not write, and alone at its path.
func (p placement) good() bool {
	return p.carried && len(p.behind) == 0 && len(p.overlapping) == 0
}

// shadowed reports whether someone else set the account's path: an entry
// credo did not write names it, or a path inside or around it. An entry
// before the account's that names no such path (a whole values file, as
// earlier versions of credo left before their own) is moved behind it
// without a Warning: what it holds is not credo's to read, and what was
// deployed is checked anyway (deployedValue).
func (p placement) shadowed() bool {
	return len(p.overlapping) > 0
}

// placeValues is in with the entries of accounts first (in their order,
// want among them, added if missing) and without the other entries whose
// targetPath overlaps want's. Every other entry keeps its order. Applied to
// its own result it changes nothing, so accounts of one release never
// fight over the order.
func placeValues(in []helmv2.ValuesReference, want helmv2.ValuesReference, accounts map[string]helmv2.ValuesReference) []helmv2.ValuesReference {
	var ours, rest []helmv2.ValuesReference
	has := false
	for _, v := range in {
		switch {
		case v.Kind == want.Kind && v.Name == want.Name && v.ValuesKey == want.ValuesKey:
			if !has {
				ours, has = append(ours, want), true
			}
		case isAccountEntry(v, accounts):
			ours = append(ours, v)
		case v.TargetPath != "" && pathsOverlap(v.TargetPath, want.TargetPath):
			// Dropped: nothing but the account sets its path.
		default:
			rest = append(rest, v)
		}
	}
	if !has {
		ours = append(ours, want)
	}
	return append(ours, rest...)
}

// describeEntry names a valuesFrom entry for a message: its kind, name,
// key and targetPath, never what it holds.
func describeEntry(v helmv2.ValuesReference) string {
	s := v.Kind + "/" + v.Name
	if v.ValuesKey != "" {
		s += " key " + v.ValuesKey
	}
	if v.TargetPath != "" {
		s += " at " + v.TargetPath
	}
	return s
}

// pathSegments splits a values path on the dots Helm's strvals parser
// splits on (a dot escaped with a backslash is part of a key).
func pathSegments(p string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case p[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	return append(out, cur.String())
}

// pathsOverlap reports whether a and b are one path, or one is inside the
// other: setting either can change the value at the other.
func pathsOverlap(a, b string) bool {
	sa, sb := pathSegments(a), pathSegments(b)
	if len(sb) < len(sa) {
		sa, sb = sb, sa
	}
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}

// valuesRef is the valuesFrom entry an account needs.
func valuesRef(acct *credv1.CredentialAccount) helmv2.ValuesReference {
	return helmv2.ValuesReference{
		Kind:       "Secret",
		Name:       acct.SecretName(),
		ValuesKey:  credv1.PasswordKey,
		TargetPath: acct.Spec.ValuesFrom.TargetPath,
	}
}
