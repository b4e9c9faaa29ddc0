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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/credo-dev/credo/internal/helmrecord"
)

// errNoValueAtPath: the deployed values have nothing at the path.
var errNoValueAtPath = errors.New("no value at the path")

// deployedValue is the value at path (a targetPath) of the values Helm
// recorded for the release version latest of hr: what the chart rendered,
// not what the HelmRelease's spec or status say. It reads the storage
// Secret uncached (it can be megabytes, and is read only to confirm a
// delivery), in the storage namespace the spec gives: the status, which
// names the version, is no proof of where Helm keeps it (helmrecord.Of).
// errNoValueAtPath when the values have nothing there.
func (r *CredentialAccountReconciler) deployedValue(ctx context.Context, hr *helmv2.HelmRelease, latest *helmv2.Snapshot, path string) (string, error) {
	key, err := helmrecord.Of(hr, latest)
	if err != nil {
		return "", err
	}
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, key, &s); err != nil {
		return "", fmt.Errorf("reading the Helm release record %s: %w", key, err)
	}
	if err := helmrecord.Check(&s, latest.Name); err != nil {
		return "", err
	}
	rec, err := helmrecord.Decode(s.Data["release"])
	if err != nil {
		return "", fmt.Errorf("decoding the Helm release record %s: %w", key, err)
	}
	if rec.Name != latest.Name || rec.Version != latest.Version {
		return "", fmt.Errorf("the Helm release record %s is of release %s v%d", key, rec.Name, rec.Version)
	}
	return valueAt(rec.Config, path)
}

// valueAt is the value at path in values (a record's raw config), printed
// as Helm prints a scalar into a template; errNoValueAtPath when there is
// none, or a map or a list. Only the maps on the path are decoded, each
// into its raw members: whatever else the values hold is never expanded.
func valueAt(values json.RawMessage, path string) (string, error) {
	cur := values
	for _, seg := range pathSegments(path) {
		var m map[string]json.RawMessage
		if !isObject(cur) || json.Unmarshal(cur, &m) != nil {
			return "", errNoValueAtPath
		}
		var ok bool
		if cur, ok = m[seg]; !ok {
			return "", errNoValueAtPath
		}
	}
	trimmed := bytes.TrimSpace(cur)
	if len(trimmed) == 0 || trimmed[0] == '{' || trimmed[0] == '[' {
		return "", errNoValueAtPath
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return "", errNoValueAtPath
	}
	switch v := v.(type) {
	case nil:
		return "", errNoValueAtPath
	case string:
		return v, nil
	default:
		return fmt.Sprint(v), nil
	}
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{'
}
