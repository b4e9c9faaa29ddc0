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
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/release"
)

// errUnsupportedSource refuses source kinds that are named in the API but not built.
var errUnsupportedSource = errors.New("part of the API but not built yet")

// errInvalidSelector refuses a releaseSelector that cannot be parsed.
var errInvalidSelector = errors.New("invalid releaseSelector")

// ruleOf is what the AccountSource selects releases by: a chartRef without
// a namespace names a source in the platform's source namespaces only.
func (r *AccountSourceReconciler) ruleOf(src *credv1.AccountSource) release.Rule {
	return release.Rule{Chart: src.Spec.Chart, ChartRef: src.Spec.ChartRef, ReleaseSelector: src.Spec.ReleaseSelector,
		SourceNamespaces: r.SourceNamespaces}
}

// sourceSelects reports whether the AccountSource may apply to the
// release, with a chartRef without a namespace matching its source in any
// namespace: more releases than the AccountSourceReconciler derives
// accounts for (it looks in the platform's source namespaces only), so
// that a name the source may reserve for a platform account is refused to
// a tenant account (fail closed). c reads the source a chartRef names when
// the rule has a chart.
func sourceSelects(ctx context.Context, c client.Reader, src *credv1.AccountSource, hr *helmv2.HelmRelease) (bool, error) {
	rule := release.Rule{Chart: src.Spec.Chart, ChartRef: src.Spec.ChartRef, ReleaseSelector: src.Spec.ReleaseSelector}
	if ref := hr.Spec.ChartRef; ref != nil {
		rule.SourceNamespaces = []string{ref.Namespace}
		if ref.Namespace == "" {
			rule.SourceNamespaces = []string{hr.Namespace}
		}
	}
	return rule.Selects(ctx, c, hr, nil)
}

// derivation is what an AccountSource derives from one release.
type derivation struct {
	// accounts by object name.
	accounts map[string]*credv1.CredentialAccount
	// invalid lists the entries whose values could not be read: their
	// existing accounts are kept.
	invalid []int
	// problems are the release's refused usernames and unreadable values.
	problems []problem
}

// problem is one thing an AccountSource could not do for one release: told
// to the release, counted on the source.
type problem struct {
	reason string
	// release is the HelmRelease it concerns.
	release client.ObjectKey
	// message is for the release's event: it names no other namespace.
	message string
}

// releaseOf is the HelmRelease of an account.
func releaseOf(a *credv1.CredentialAccount) client.ObjectKey {
	return client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.Release}
}

func (p problem) Error() string { return p.message }

// usernameCandidate is one username an entry derives.
type usernameCandidate struct {
	entry    int
	username string
	platform bool
	held     bool
}

// desiredAccounts derives the CredentialAccounts of one release. Usernames
// are compared as their account Secret names (after the DNS mapping): two
// that map to one name cannot both have an account. A platform entry's
// username is reserved first; then a username whose account exists already
// for the same entry (held: "<entry>/<username>") keeps it; then the first
// by entry and username. Every other username mapping to a taken name is
// refused (UsernameRefused), so a tenant's values key can never displace,
// rename or take over a platform account or another key's account. keys
// holds the keys at the valuesMap paths of src (releaseValues.keysAt).
func desiredAccounts(src *credv1.AccountSource, hr *helmv2.HelmRelease, keys map[string]pathKeys, held map[string]bool) (*derivation, error) {
	d := &derivation{accounts: map[string]*credv1.CredentialAccount{}}
	var cands []usernameCandidate
	for i, entry := range src.Spec.Sources {
		var usernames []string
		switch entry.Kind {
		case credv1.SourceStatic:
			usernames = []string{entry.Static.Username}
		case credv1.SourceValuesMap:
			at := keys[entry.ValuesMap.Path]
			if at.err != nil {
				d.invalid = append(d.invalid, i)
				d.problems = append(d.problems, problem{credv1.InvalidValuesReason, client.ObjectKeyFromObject(hr),
					fmt.Sprintf("%s (sources[%d]); its accounts are kept as they are", at.err.Error(), i)})
				continue
			}
			usernames = at.keys
		default:
			return nil, fmt.Errorf("sources[%d]: source kind %s is %w; built: ValuesMap, Static", i, entry.Kind, errUnsupportedSource)
		}
		for _, u := range usernames {
			cands = append(cands, usernameCandidate{entry: i, username: u,
				platform: entry.Template.Owner == credv1.OwnerPlatform, held: held[fmt.Sprintf("%d/%s", i, u)]})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].platform != cands[b].platform {
			return cands[a].platform
		}
		return cands[a].held && !cands[b].held
	})
	taken := map[string]usernameCandidate{}
	for _, c := range cands {
		a := deriveAccount(src, hr, c.entry, src.Spec.Sources[c.entry].Template, c.username)
		if err := validDerivedUsername(c.username, a.Name); err != nil {
			d.problems = append(d.problems, problem{credv1.UsernameRefusedReason, client.ObjectKeyFromObject(hr),
				fmt.Sprintf("username %s (sources[%d]) is refused: %s", quoteKey(c.username), c.entry, err.Error())})
			continue
		}
		secret := credv1.AccountSecretName(hr.Name, c.username)
		if first, ok := taken[secret]; ok {
			d.problems = append(d.problems, problem{credv1.UsernameRefusedReason, client.ObjectKeyFromObject(hr),
				fmt.Sprintf("username %s (sources[%d]) maps to Secret %s of username %s (sources[%d]%s); no account is created for it",
					quoteKey(c.username), c.entry, secret, quoteKey(first.username), first.entry, ownerNote(first))})
			continue
		}
		taken[secret] = c
		d.accounts[a.Name] = a
	}
	return d, nil
}

func ownerNote(c usernameCandidate) string {
	if c.platform {
		return ", owned by the platform"
	}
	return ""
}

// quoteKey quotes a username taken from values for a message, shortened.
func quoteKey(u string) string {
	if len(u) > 64 {
		u = u[:64] + "..."
	}
	return fmt.Sprintf("%q", u)
}

// validDerivedUsername refuses a username the CRD would refuse, or whose
// account name cannot be an object name, before asking the API server.
func validDerivedUsername(username, accountName string) error {
	if username == "" || len(username) > 128 {
		return errors.New("a username has 1 to 128 characters")
	}
	if errs := validation.IsDNS1123Subdomain(accountName); len(errs) > 0 {
		return fmt.Errorf("its account name %s is not valid: %s", accountName, strings.Join(errs, "; "))
	}
	return nil
}

// entryLabel records which entry of the source derived an account.
const entryLabel = "credentials.credo.dev/source-entry"

func deriveAccount(src *credv1.AccountSource, hr *helmv2.HelmRelease, entry int, t credv1.AccountTemplate, username string) *credv1.CredentialAccount {
	a := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{
			Name:      hr.Name + "-" + credv1.DNSName(username),
			Namespace: hr.Namespace,
			Labels: map[string]string{
				credv1.SourceLabel:  src.Name,
				credv1.ReleaseLabel: hr.Name,
				entryLabel:          fmt.Sprint(entry),
			},
			OwnerReferences: []metav1.OwnerReference{release.OwnerReference(hr)},
		},
		Spec: credv1.CredentialAccountSpec{
			Release:      hr.Name,
			Username:     username,
			Format:       t.Format,
			Owner:        t.Owner,
			SecretLabels: t.SecretLabels,
		},
	}
	if t.ValuesFrom != nil {
		a.Spec.ValuesFrom = &credv1.ValuesFromTarget{
			TargetPath: strings.ReplaceAll(t.ValuesFrom.TargetPath, credv1.UsernamePlaceholder, username),
		}
	}
	if p := t.Plaintext; p != nil {
		a.Spec.Plaintext = &credv1.PlaintextDelivery{Consumers: append([]credv1.ServiceAccountRef(nil), p.Consumers...)}
		if ref := p.SecretRef; ref != nil {
			a.Spec.Plaintext.SecretRef = &credv1.SecretKeyRef{Name: strings.ReplaceAll(ref.Name, credv1.ReleasePlaceholder, hr.Name), Key: ref.Key}
		}
	}
	return a
}

// valuesPaths are the valuesMap paths of src's entries.
func valuesPaths(src *credv1.AccountSource) []string {
	var paths []string
	for _, entry := range src.Spec.Sources {
		if entry.Kind == credv1.SourceValuesMap && entry.ValuesMap != nil {
			paths = append(paths, entry.ValuesMap.Path)
		}
	}
	return paths
}

// reservedUsername returns the username a platform entry of src derives
// for hr whose account Secret is secretName ("" when none): a tenant
// account can never hold the Secret of an AccountSource's platform account,
// even when it was declared before the AccountSource created it. The cache
// holds no spec.values (ReleaseCacheTransform): for a platform valuesMap
// entry, hr is read with reader, uncached, once.
func reservedUsername(ctx context.Context, reader client.Reader, src *credv1.AccountSource, hr *helmv2.HelmRelease, secretName string) (string, error) {
	var values *apiextensionsv1.JSON
	read := false
	for _, entry := range src.Spec.Sources {
		if entry.Template.Owner != credv1.OwnerPlatform {
			continue
		}
		var usernames []string
		switch entry.Kind {
		case credv1.SourceStatic:
			usernames = []string{entry.Static.Username}
		case credv1.SourceValuesMap:
			if !read {
				fresh := &helmv2.HelmRelease{}
				if err := reader.Get(ctx, client.ObjectKeyFromObject(hr), fresh); err != nil {
					return "", fmt.Errorf("reading the values of HelmRelease %s: %w", hr.Name, err)
				}
				values, read = fresh.Spec.Values, true
			}
			// Values that cannot be read derive no account: nothing to reserve.
			usernames, _ = valuesMapKeys(values, entry.ValuesMap.Path)
		}
		for _, u := range usernames {
			if credv1.AccountSecretName(hr.Name, u) == secretName {
				return u, nil
			}
		}
	}
	return "", nil
}
