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

package controlplane

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountUser is the user name and groups kube-apiserver gives the
// ServiceAccount namespace/name.
func ServiceAccountUser(namespace, name string) (string, []string) {
	return "system:serviceaccount:" + namespace + ":" + name,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// SetKubeconfigNamespace makes ns the namespace of the kubeconfig's
// current context, as a platform hands a tenant its kubeconfig: kubectl
// and kubectl credo act there when no -n is given.
func SetKubeconfigNamespace(path, ns string) error {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("%s: no current context", path)
	}
	ctx.Namespace = ns
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Allowed asks kube-apiserver, by a SubjectAccessReview, whether user in
// groups may make the request attrs (its namespace included). RBAC's
// authorizer sees bindings through its own informer: a binding made a
// moment ago may not count yet, so a test that just bound one waits for
// the answer it expects.
func (e *Environment) Allowed(ctx context.Context, user string, groups []string, attrs authzv1.ResourceAttributes) (bool, error) {
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs}}
	if err := e.Client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking whether %s may %s %s: %w", user, attrs.Verb, attrs.Resource, err)
	}
	return sar.Status.Allowed, nil
}

// SecretWriter returns a client of a tenant of ns who may do anything with
// the Secrets of ns, as the built-in admin and edit roles grant, and
// nothing else: the user secret-writer@<ns>, bound in ns to a Role
// granting every verb on Secrets.
func (e *Environment) SecretWriter(ctx context.Context, ns string) (client.Client, error) {
	user := "secret-writer@" + ns
	if err := e.GrantSecrets(ctx, ns, "secret-writer", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}); err != nil {
		return nil, err
	}
	return e.UserClient(user, nil)
}

// GrantSecrets binds subject, in ns, to a Role name (and a RoleBinding of
// that name) granting every verb on Secrets.
func (e *Environment) GrantSecrets(ctx context.Context, ns, name string, subject rbacv1.Subject) error {
	if err := e.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"*"}}},
	}); err != nil {
		return fmt.Errorf("creating Role %s/%s: %w", ns, name, err)
	}
	if err := e.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}); err != nil {
		return fmt.Errorf("creating RoleBinding %s/%s: %w", ns, name, err)
	}
	return nil
}
