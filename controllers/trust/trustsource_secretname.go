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

	"k8s.io/apimachinery/pkg/util/validation"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

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
