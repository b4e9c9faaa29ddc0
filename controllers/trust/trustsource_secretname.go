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

package trust

import (
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/reconciler"
)

// maxListedReleases is how many releases a message names before "and N more".
const maxListedReleases = 3

// secretNameTemplateError says why the rule's secretName names no Secret
// whatever the release (no {release}, or not a Secret name once a release
// name replaces it), or returns "". Admission refuses both; a TrustSource
// stored before that validation may still hold one.
func secretNameTemplateError(ts *trustv1.TrustSource) string {
	if !strings.Contains(ts.Spec.SecretName, trustv1.ReleasePlaceholder) {
		return fmt.Sprintf("secretName %q does not contain %s: it would name one Secret for every release", ts.Spec.SecretName, trustv1.ReleasePlaceholder)
	}
	if errs := validation.IsDNS1123Subdomain(ts.SecretNameFor("r")); len(errs) > 0 {
		return fmt.Sprintf("secretName %q is not a Secret name once %s is replaced: %s", ts.Spec.SecretName, trustv1.ReleasePlaceholder, strings.Join(errs, "; "))
	}
	return ""
}

// sourceNameFor returns the Secret name the rule gives the release, and
// whether it is one: a rule whose name is not a Secret name claims nothing.
func sourceNameFor(ts *trustv1.TrustSource, release string) (string, bool) {
	if secretNameTemplateError(ts) != "" {
		return "", false
	}
	name := ts.SecretNameFor(release)
	return name, len(validation.IsDNS1123Subdomain(name)) == 0
}

// checkSecretName refuses a rule whose secretName names no Secret, for
// every release or for some of the selected releases hrs: it is Stalled
// with InvalidSecretName, and claims none of those releases.
func checkSecretName(ts *trustv1.TrustSource, hrs []*helmv2.HelmRelease) error {
	if msg := secretNameTemplateError(ts); msg != "" {
		return reconciler.NewStalling(trustv1.InvalidSecretNameReason, "%s", msg)
	}
	var bad []string
	var why string
	for _, hr := range hrs {
		if _, ok := sourceNameFor(ts, hr.Name); !ok {
			if why == "" {
				why = strings.Join(validation.IsDNS1123Subdomain(ts.SecretNameFor(hr.Name)), "; ")
			}
			bad = append(bad, hr.Namespace+"/"+hr.Name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	listed := strings.Join(bad[:min(len(bad), maxListedReleases)], ", ")
	if len(bad) > maxListedReleases {
		listed += fmt.Sprintf(" and %d more", len(bad)-maxListedReleases)
	}
	return reconciler.NewStalling(trustv1.InvalidSecretNameReason,
		"secretName is not a Secret name for %d of %d matched release(s) (%s): %s; the rule claims none of them",
		len(bad), len(hrs), listed, why)
}
