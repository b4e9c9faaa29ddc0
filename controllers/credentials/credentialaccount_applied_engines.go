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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/engine"
)

// cannotReconcileMax bounds the text of CloudNativePG's cannotReconcile
// entries quoted in the Applied message.
const cannotReconcileMax = 256

// enginesApplied is what the observed operators' objects in the account's
// namespace that reference the Secret s say of its current version: one
// state per CloudNativePG managed role and per mariadb-operator User.
func (r *CredentialAccountReconciler) enginesApplied(ctx context.Context, acct *credv1.CredentialAccount, s *corev1.Secret) ([]consumerState, error) {
	var states []consumerState
	for _, k := range r.engines.kinds {
		list := k.NewList()
		if err := r.engines.reader.List(ctx, list, client.InNamespace(acct.Namespace)); err != nil {
			return states, fmt.Errorf("listing %s %ss: %w", k.Engine, k.GVK.Kind, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			var found []consumerState
			var err error
			switch k.GVK {
			case engine.ClusterGVK:
				found, err = clusterApplied(u, s)
			case engine.UserGVK:
				found, err = userApplied(u, acct, s)
			}
			if err != nil {
				return states, err
			}
			states = append(states, found...)
		}
	}
	return states, nil
}

// clusterApplied is what a CloudNativePG Cluster says of each managed role
// whose password is the Secret s: reconciled when its passwordStatus holds
// s's current resourceVersion, failed when it is listed in cannotReconcile,
// pending otherwise.
func clusterApplied(u *unstructured.Unstructured, s *corev1.Secret) ([]consumerState, error) {
	c, err := engine.DecodeCluster(u)
	if err != nil {
		return nil, err
	}
	var states []consumerState
	st := c.Status.ManagedRolesStatus
	for _, role := range c.RolesOf(s.Name) {
		if why, ok := st.CannotReconcile[role]; ok {
			states = append(states, appliedFalse(credv1.RoleCannotReconcileReason,
				"Cluster %s cannot reconcile role %s: %s", u.GetName(), role, truncate(strings.Join(why, "; "), cannotReconcileMax)))
			continue
		}
		if ps, ok := st.PasswordStatus[role]; ok && ps.SecretResourceVersion == s.ResourceVersion {
			states = append(states, appliedTrue(credv1.RoleReconciledReason,
				"Cluster %s reconciled role %s with it", u.GetName(), role))
			continue
		}
		states = append(states, appliedUnknown(credv1.RolePendingReason,
			"Cluster %s has not reported role %s reconciled with Secret version %s", u.GetName(), role, s.ResourceVersion))
	}
	return states, nil
}

// userApplied is what a mariadb-operator User whose password is the Secret
// s says: it reports no version of the Secret it applied, only Ready. A
// Ready that became True at or after the account's last change was set by
// a reconcile that read the Secret after the change; a Ready that stayed
// True across the change tells nothing.
func userApplied(u *unstructured.Unstructured, acct *credv1.CredentialAccount, s *corev1.Secret) ([]consumerState, error) {
	user, err := engine.DecodeUser(u)
	if err != nil {
		return nil, err
	}
	if !user.Uses(s.Name) {
		return nil, nil
	}
	ready := apimeta.FindStatusCondition(user.Status.Conditions, "Ready")
	switch {
	case ready != nil && ready.Status == metav1.ConditionFalse:
		return []consumerState{appliedFalse(credv1.UserNotReadyReason, "User %s is not Ready (%s)", u.GetName(), ready.Reason)}, nil
	case ready != nil && ready.Status == metav1.ConditionTrue && acct.Status.LastChange != nil && !ready.LastTransitionTime.Before(acct.Status.LastChange):
		return []consumerState{appliedTrue(credv1.UserReadyReason, "User %s became Ready after it", u.GetName())}, nil
	}
	return []consumerState{appliedUnknown(credv1.EngineDoesNotReportVersionReason,
		"User %s reports no version of the Secret it applied and its Ready did not change after the password did", u.GetName())}, nil
}
