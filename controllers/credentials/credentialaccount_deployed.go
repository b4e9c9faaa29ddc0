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
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxReleaseRecord bounds what credo reads of a Helm release record once
// decompressed: a chart's manifest and values, far below it in practice.
const maxReleaseRecord = 64 << 20

// errNoValueAtPath: the deployed values have nothing at the path.
var errNoValueAtPath = errors.New("no value at the path")

// releaseRecord is the part of Helm's release record credo reads: which
// release and version it is, and the values it was installed or upgraded
// with (Helm's "config", the values helm-controller composed).
type releaseRecord struct {
	Name    string         `json:"name"`
	Version int            `json:"version"`
	Config  map[string]any `json:"config"`
}

// storageSecretName is the name of Helm's storage Secret of a release
// version (the Secret storage driver, which helm-controller uses).
func storageSecretName(release string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, version)
}

// deployedValue is the value at path (a targetPath) of the values Helm
// recorded for the release version latest of hr: what the chart rendered,
// not what the HelmRelease's spec or status say. It reads the storage
// Secret uncached (it can be megabytes, and is read only to confirm a
// delivery). errNoValueAtPath when the values have nothing there.
func (r *CredentialAccountReconciler) deployedValue(ctx context.Context, hr *helmv2.HelmRelease, latest *helmv2.Snapshot, path string) (string, error) {
	ns := hr.Status.StorageNamespace
	if ns == "" {
		ns = hr.Namespace
	}
	var s corev1.Secret
	key := client.ObjectKey{Namespace: ns, Name: storageSecretName(latest.Name, latest.Version)}
	if err := r.APIReader.Get(ctx, key, &s); err != nil {
		return "", fmt.Errorf("reading the Helm release record %s: %w", key, err)
	}
	rec, err := decodeReleaseRecord(s.Data["release"])
	if err != nil {
		return "", fmt.Errorf("decoding the Helm release record %s: %w", key, err)
	}
	if rec.Name != latest.Name || rec.Version != latest.Version {
		return "", fmt.Errorf("the Helm release record %s is of release %s v%d", key, rec.Name, rec.Version)
	}
	return valueAt(rec.Config, path)
}

// decodeReleaseRecord decodes Helm's storage encoding: base64 of the
// gzipped JSON record (or of the JSON itself).
func decodeReleaseRecord(data []byte) (*releaseRecord, error) {
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	var r io.Reader = bytes.NewReader(raw)
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	body, err := io.ReadAll(io.LimitReader(r, maxReleaseRecord+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxReleaseRecord {
		return nil, fmt.Errorf("larger than %d bytes", maxReleaseRecord)
	}
	var rec releaseRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, fmt.Errorf("not a release record: %w", err)
	}
	return &rec, nil
}

// valueAt is the value at path in values, printed as Helm prints a
// scalar into a template; errNoValueAtPath when there is none, or a map.
func valueAt(values map[string]any, path string) (string, error) {
	var cur any = values
	for _, seg := range pathSegments(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", errNoValueAtPath
		}
		if cur, ok = m[seg]; !ok {
			return "", errNoValueAtPath
		}
	}
	switch v := cur.(type) {
	case nil, map[string]any, []any:
		return "", errNoValueAtPath
	case string:
		return v, nil
	default:
		return fmt.Sprint(v), nil
	}
}
