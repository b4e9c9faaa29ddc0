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

package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterGVK is CloudNativePG's Cluster.
var ClusterGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Cluster"}

// Cluster holds the fields credo reads of a CloudNativePG Cluster
// (postgresql.cnpg.io/v1, as of CloudNativePG v1.30: api/v1
// cluster_types.go, CRD config/crd/bases/postgresql.cnpg.io_clusters.yaml):
// spec.managed.roles[].{name,ensure,passwordSecret.name} and
// status.managedRolesStatus.{passwordStatus,cannotReconcile}.
type Cluster struct {
	Spec struct {
		Managed *struct {
			Roles []Role `json:"roles,omitempty"`
		} `json:"managed,omitempty"`
	} `json:"spec"`
	Status struct {
		ManagedRolesStatus ManagedRolesStatus `json:"managedRolesStatus"`
	} `json:"status"`
}

// Role is an entry of spec.managed.roles.
type Role struct {
	// Name is the role in PostgreSQL.
	Name string `json:"name"`
	// Ensure is present (the default) or absent.
	Ensure string `json:"ensure,omitempty"`
	// PasswordSecret names the Secret holding the role's password.
	PasswordSecret *struct {
		Name string `json:"name"`
	} `json:"passwordSecret,omitempty"`
}

// ManagedRolesStatus is status.managedRolesStatus, written by the instance
// manager of the primary after each synchronization of the roles.
type ManagedRolesStatus struct {
	// PasswordStatus holds, per role, the resourceVersion of the password
	// Secret last applied to PostgreSQL.
	PasswordStatus map[string]PasswordState `json:"passwordStatus,omitempty"`
	// CannotReconcile lists, per role, why it cannot be reconciled.
	CannotReconcile map[string][]string `json:"cannotReconcile,omitempty"`
}

// PasswordState is an entry of status.managedRolesStatus.passwordStatus.
type PasswordState struct {
	// SecretResourceVersion is the resourceVersion of the password Secret
	// applied.
	SecretResourceVersion string `json:"resourceVersion,omitempty"`
	// TransactionID is the last transaction that changed the role.
	TransactionID int64 `json:"transactionID,omitempty"`
}

// DecodeCluster reads the fields credo needs from an unstructured Cluster.
func DecodeCluster(u *unstructured.Unstructured) (*Cluster, error) {
	c := &Cluster{}
	return c, decode(u, c)
}

// RolesOf returns the roles of the Cluster whose password is the Secret
// named secret; absent roles are left out.
func (c *Cluster) RolesOf(secret string) []string {
	if c.Spec.Managed == nil {
		return nil
	}
	var roles []string
	for _, r := range c.Spec.Managed.Roles {
		if r.PasswordSecret != nil && r.PasswordSecret.Name == secret && r.Ensure != "absent" {
			roles = append(roles, r.Name)
		}
	}
	return roles
}

// SecretNames returns every password Secret the Cluster's managed roles name.
func (c *Cluster) SecretNames() []string {
	if c.Spec.Managed == nil {
		return nil
	}
	var names []string
	for _, r := range c.Spec.Managed.Roles {
		if r.PasswordSecret != nil && r.PasswordSecret.Name != "" {
			names = append(names, r.PasswordSecret.Name)
		}
	}
	return names
}
