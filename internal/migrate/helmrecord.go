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

package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/internal/helmrecord"
)

// A MariaDB rendered by the chart keeps reading the <release>-credentials
// key its rootPasswordSecretKeyRef names (immutable once set). The
// migration adopts that Secret only once the chart no longer renders it
// (and Helm, told to keep it, has left it in place): adopting it while
// Helm still renders it would have the next upgrade fail on its ownership
// metadata, or write the chart's value back over the rotated one. Whether
// the release renders it is read from the release's latest record in
// Helm's storage (the Secret sh.helm.release.v1.<name>.v<version> that
// helm-controller's status.history names), read with internal/helmrecord;
// the test writes the records with Helm's own driver.

// rendersSecret reports whether the latest Helm release of hr renders a
// Secret named name in namespace, in its manifest or its hooks. The
// version is the one helm-controller's status.history names; since a
// status is not proof (whoever may write it may name an older record), the
// record must be of hr's own release (its name, namespace and storage
// namespace as hr's spec gives them, and Helm's labels on the record), and
// no newer version may exist in Helm's storage.
func rendersSecret(ctx context.Context, c client.Reader, hr *helmv2.HelmRelease, namespace, name string) (bool, error) {
	latest := hr.Status.History.Latest()
	if latest == nil {
		return false, fmt.Errorf("HelmRelease %s/%s records no Helm release in status.history", hr.Namespace, hr.Name)
	}
	key, err := helmrecord.Of(hr, latest)
	if err != nil {
		return false, err
	}
	release, releaseNamespace := hr.GetReleaseName(), hr.GetReleaseNamespace()
	var record corev1.Secret
	if err := c.Get(ctx, key, &record); err != nil {
		return false, fmt.Errorf("reading Helm's record %s/%s: %w", key.Namespace, key.Name, err)
	}
	if err := helmrecord.Check(&record, release); err != nil {
		return false, err
	}
	newer := client.ObjectKey{Namespace: key.Namespace, Name: helmrecord.SecretName(release, latest.Version+1)}
	switch err := c.Get(ctx, newer, &corev1.Secret{}); {
	case err == nil:
		return false, fmt.Errorf("HelmRelease %s/%s: Helm's storage holds %s, newer than status.history names", hr.Namespace, hr.Name, newer.Name)
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("reading Helm's record %s/%s: %w", newer.Namespace, newer.Name, err)
	}
	rls, err := helmrecord.Decode(record.Data["release"])
	if err != nil {
		return false, fmt.Errorf("reading Helm's record %s/%s: %w", key.Namespace, key.Name, err)
	}
	for _, manifest := range rls.Manifests() {
		found, err := rendersIn(manifest, releaseNamespace, namespace, name)
		if err != nil {
			return false, fmt.Errorf("reading the manifest of Helm's record %s/%s: %w", key.Namespace, key.Name, err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// rendersIn reports whether the YAML stream manifest holds a Secret named
// name in namespace (a document with no namespace is in releaseNamespace).
func rendersIn(manifest, releaseNamespace, namespace, name string) (bool, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	for {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := dec.Decode(&head); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, err
		}
		ns := head.Metadata.Namespace
		if ns == "" {
			ns = releaseNamespace
		}
		if head.APIVersion == "v1" && head.Kind == "Secret" && head.Metadata.Name == name && ns == namespace {
			return true, nil
		}
	}
}
