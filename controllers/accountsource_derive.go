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

package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/account"
)

// errUnsupportedSource refuses source kinds that are named in the API but not built.
var errUnsupportedSource = errors.New("source kind is not supported yet")

// errInvalidValues marks a release whose values cannot be read for an entry.
var errInvalidValues = errors.New("invalid values")

// sourceSelects reports whether the AccountSource applies to the release.
func sourceSelects(src *credv1.AccountSource, hr *helmv2.HelmRelease) (bool, error) {
	if src.Spec.Chart != "" && (hr.Spec.Chart == nil || hr.Spec.Chart.Spec.Chart != src.Spec.Chart) {
		return false, nil
	}
	if src.Spec.ReleaseSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(src.Spec.ReleaseSelector)
		if err != nil {
			return false, fmt.Errorf("releaseSelector: %w", err)
		}
		if !sel.Matches(labels.Set(hr.Labels)) {
			return false, nil
		}
	}
	return src.Spec.Chart != "" || src.Spec.ReleaseSelector != nil, nil
}

// desiredAccounts derives the CredentialAccounts of one release. A release
// whose values cannot be read for an entry returns errInvalidValues with the
// accounts of the other entries; the caller keeps that entry's accounts.
func desiredAccounts(src *credv1.AccountSource, hr *helmv2.HelmRelease) (map[string]*credv1.CredentialAccount, []int, error) {
	out := map[string]*credv1.CredentialAccount{}
	var invalid []int
	var errs []error
	for i, entry := range src.Spec.Sources {
		var usernames []string
		switch entry.Kind {
		case credv1.SourceStatic:
			usernames = []string{entry.Static.Username}
		case credv1.SourceValuesMap:
			keys, err := valuesMapKeys(hr, entry.ValuesMap.Path)
			if err != nil {
				invalid = append(invalid, i)
				errs = append(errs, fmt.Errorf("%w: HelmRelease %s/%s: %w", errInvalidValues, hr.Namespace, hr.Name, err))
				continue
			}
			usernames = keys
		default:
			return nil, nil, fmt.Errorf("%w: sources[%d] is %s; built: ValuesMap, Static", errUnsupportedSource, i, entry.Kind)
		}
		for _, u := range usernames {
			a := deriveAccount(src, hr, i, entry.Template, u)
			if _, taken := out[a.Name]; taken {
				sum := sha256.Sum256([]byte(u))
				a.Name += "-" + hex.EncodeToString(sum[:])[:8]
			}
			out[a.Name] = a
		}
	}
	return out, invalid, errors.Join(errs...)
}

// entryLabel records which entry of the source derived an account.
const entryLabel = "credentials.credo.dev/source-entry"

func deriveAccount(src *credv1.AccountSource, hr *helmv2.HelmRelease, entry int, t credv1.AccountTemplate, username string) *credv1.CredentialAccount {
	a := &credv1.CredentialAccount{
		ObjectMeta: metav1.ObjectMeta{
			Name:      hr.Name + "-" + account.DNSName(username),
			Namespace: hr.Namespace,
			Labels: map[string]string{
				credv1.SourceLabel:  src.Name,
				credv1.ReleaseLabel: hr.Name,
				entryLabel:          fmt.Sprint(entry),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind,
				Name: hr.Name, UID: hr.UID, BlockOwnerDeletion: ptr.To(false),
			}},
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
	return a
}

// valuesMapKeys returns the sorted keys of the map at a dot path of the
// release's spec.values. An absent path is an empty map; a path that holds
// something else than a map is an error.
func valuesMapKeys(hr *helmv2.HelmRelease, path string) ([]string, error) {
	if hr.Spec.Values == nil || len(hr.Spec.Values.Raw) == 0 {
		return nil, nil
	}
	var cur any
	if err := json.Unmarshal(hr.Spec.Values.Raw, &cur); err != nil {
		return nil, fmt.Errorf("spec.values: %w", err)
	}
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.values.%s: not a map", path)
		}
		if cur, ok = m[part]; !ok {
			return nil, nil
		}
	}
	if cur == nil {
		return nil, nil
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.values.%s: not a map", path)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}
