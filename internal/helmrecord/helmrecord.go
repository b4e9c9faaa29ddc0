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

// Package helmrecord reads Helm's release records: the Secrets Helm's
// storage driver (the Secret driver, which helm-controller uses) keeps a
// release's versions in. It reads only what credo needs of them, by their
// documented encoding (data.release: the release as JSON, gzipped, then
// base64), since Helm's own reader (helm.sh/helm/v4/pkg/storage/driver)
// links every SQL driver Helm supports into the binaries that import it.
//
// A record holds the release's values and manifests, secrets among them:
// this package logs and prints nothing of it, and its callers must not
// either.
package helmrecord

import (
	"encoding/json"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretType is the type of the Secrets Helm keeps its records in.
const SecretType = "helm.sh/release.v1"

// SecretName is the name of the Secret Helm's storage driver keeps version
// of release in: sh.helm.release.v1.<release>.v<version>.
func SecretName(release string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, version)
}

// Of returns the key of the record of version of hr's Helm release (a
// version its status.history names), in the storage namespace its spec
// gives, or an error when snap, read from the status, names another Helm
// release than the spec. Whoever may write a HelmRelease's status may
// write anything there: the namespace and the name are the spec's, never
// the status'.
func Of(hr *helmv2.HelmRelease, snap *helmv2.Snapshot) (client.ObjectKey, error) {
	release, namespace := hr.GetReleaseName(), hr.GetReleaseNamespace()
	if snap.Name != release || snap.Namespace != namespace {
		return client.ObjectKey{}, fmt.Errorf("HelmRelease %s/%s: status.history names Helm release %s/%s, its spec %s/%s",
			hr.Namespace, hr.Name, snap.Namespace, snap.Name, namespace, release)
	}
	return client.ObjectKey{Namespace: hr.GetStorageNamespace(), Name: SecretName(release, snap.Version)}, nil
}

// Check returns an error unless s is Helm's record of release: Helm's
// Secret type and its owner and name labels.
func Check(s *corev1.Secret, release string) error {
	if s.Type != SecretType || s.Labels["owner"] != "helm" || s.Labels["name"] != release {
		return fmt.Errorf("Secret %s/%s is not Helm's record of release %s", s.Namespace, s.Name, release)
	}
	return nil
}

// Release is the part of Helm's release record credo reads: which release
// and version it is, the values it was installed or upgraded with (Helm's
// "config", the values helm-controller composed), and what it rendered.
type Release struct {
	// Name is the release's name.
	Name string `json:"name"`
	// Version is the release's version, counted from 1.
	Version int `json:"version"`
	// Config is the values the chart was rendered with, as recorded:
	// decoded only along the path a caller reads (a tenant's values can
	// hold millions of tiny maps in a few megabytes).
	Config json.RawMessage `json:"config"`
	// Manifest is the YAML stream of the objects the chart rendered,
	// its hooks aside.
	Manifest string `json:"manifest"`
	// Hooks are the chart's rendered hooks.
	Hooks []Hook `json:"hooks"`
}

// Hook is the part of a rendered hook credo reads.
type Hook struct {
	// Manifest is the YAML of the hook's object.
	Manifest string `json:"manifest"`
}

// Manifests are the manifest and the hooks' manifests of r: every object
// the release rendered.
func (r *Release) Manifests() []string {
	out := make([]string, 0, 1+len(r.Hooks))
	out = append(out, r.Manifest)
	for _, h := range r.Hooks {
		out = append(out, h.Manifest)
	}
	return out
}
