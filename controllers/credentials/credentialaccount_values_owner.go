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
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/conditions"
	"k8s.io/apimachinery/pkg/labels"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
	"github.com/credo-dev/credo/internal/reconciler"
)

// gitOpsOwnerLabels mark a HelmRelease applied from Git by Flux; an edit of
// its spec would be reverted at the next apply.
var gitOpsOwnerLabels = []string{"kustomize.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/name"}

// valuesOwner is another writer that owns a release's spec.valuesFrom:
// Git, or what --values-from-owner-selector names (the platform's
// application definitions, which set the whole list on every edit). credo
// never adds, moves or removes an entry there: its edit would be erased
// at the owner's next write, and put back at credo's next reconcile, a
// write loop that delivers the verifier only some of the time. It tells
// the owner which entry to list instead, and Applied judges what was
// deployed.
type valuesOwner struct {
	// is says who owns the list, completing "HelmRelease <name> ...".
	is string
	// where says where the entry is listed, for a message.
	where string
	// missing is the reason when the list lacks the account's entry.
	missing string
}

// valuesOwnerOf returns the writer that owns hr's spec.valuesFrom, if any.
func (r *CredentialAccountReconciler) valuesOwnerOf(hr *helmv2.HelmRelease) (valuesOwner, bool) {
	if l, gitops := appliedFromGit(hr); gitops {
		return valuesOwner{is: fmt.Sprintf("is applied from Git (%s)", l), where: "in Git", missing: credv1.ManagedByGitOpsReason}, true
	}
	if sel := r.ValuesFromOwners; sel != nil && !sel.Empty() && sel.Matches(labels.Set(hr.Labels)) {
		return valuesOwner{
			is:      fmt.Sprintf("has its spec.valuesFrom written by another writer (its labels match --values-from-owner-selector %s)", sel),
			where:   "in the definition that writer renders the release from (the platform's application definition of its kind)",
			missing: credv1.ValuesFromMissingReason,
		}, true
	}
	return valuesOwner{}, false
}

// report is what the owner must change for hr's valuesFrom to deliver
// want, or nil when it carries it with nothing else at its path: Stalled
// ValuesShadowed when another entry sets its path, Stalled with the
// owner's missing reason when the entry is not listed. An entry the owner
// keeps behind others is judged by what was deployed (Applied).
func (o valuesOwner) report(acct *credv1.CredentialAccount, hr *helmv2.HelmRelease, want helmv2.ValuesReference, p placement) error {
	switch {
	case p.shadowed():
		if conditions.GetReason(acct, credv1.DeliveryFailedCondition) != credv1.ValuesShadowedReason {
			metrics.ValuesShadowed(acct.Namespace)
		}
		return reconciler.NewStalling(credv1.ValuesShadowedReason,
			"HelmRelease %s %s; %s, remove what else sets %s (%s) and list the entry for Secret %s first",
			hr.Name, o.is, o.where, want.TargetPath, strings.Join(p.overlapping, ", "), want.Name)
	case !p.carried:
		return reconciler.NewStalling(o.missing,
			"HelmRelease %s %s; %s, add to its spec.valuesFrom, first: {kind: Secret, name: %s, valuesKey: %s, targetPath: %s}",
			hr.Name, o.is, o.where, want.Name, want.ValuesKey, want.TargetPath)
	}
	return nil
}

// appliedFromGit returns the label by which Flux applies hr from Git, if
// any: an edit of its spec would be reverted at the next apply.
func appliedFromGit(hr *helmv2.HelmRelease) (string, bool) {
	for _, l := range gitOpsOwnerLabels {
		if _, ok := hr.Labels[l]; ok {
			return l, true
		}
	}
	return "", false
}
