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

package accessapi

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get

// releaseWarnings says, after a mint or a revocation of acct succeeded,
// what stops the engine from using the result: the password of an account
// delivered through the HelmRelease's valuesFrom reaches the engine only
// when helm-controller reconciles the release, which it does not while the
// release is suspended. Accounts whose operator reads the Secret itself
// are not held up by a suspended release. A release that cannot be read
// gives no warning (the operation succeeded; the account's Applied
// condition tells the rest). A warning never holds a password.
func (o *Operations) releaseWarnings(ctx context.Context, acct *credv1.CredentialAccount, origin credv1.Origin) []string {
	if acct.Spec.ValuesFrom == nil {
		return nil
	}
	var hr helmv2.HelmRelease
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: acct.Namespace, Name: acct.Spec.Release}, &hr); err != nil {
		log.FromContext(ctx).V(1).Info("reading the account's HelmRelease for warnings", "helmrelease", acct.Spec.Release, "error", err.Error())
		return nil
	}
	if !hr.Spec.Suspend {
		return nil
	}
	what := "the new password reaches the engine"
	if origin == credv1.OriginRevoked {
		what = "the engine keeps accepting the previous password until then; the revocation reaches it"
	}
	return []string{fmt.Sprintf("HelmRelease %s/%s is suspended (%s): %s only when it is resumed (flux resume helmrelease %s -n %s)",
		hr.Namespace, hr.Name, credv1.ReleaseSuspendedReason, what, hr.Name, hr.Namespace)}
}

// addWarnings sends each warning to the client as a Warning header, which
// kubectl and client-go print.
func addWarnings(ctx context.Context, warnings []string) {
	for _, w := range warnings {
		warning.AddWarning(ctx, "", w)
	}
}
