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

// Package exposure finds who, besides the subjects trusted, could read a
// Secret in a namespace: every subject of the namespace's RoleBindings and
// of the ClusterRoleBindings is asked of kube-apiserver, by
// SubjectAccessReviews, for each access that reveals a Secret's data
// (reading it, starting or changing a pod that mounts it, exec into a pod
// that holds it, a Flux object a controller renders with its own rights).
// Whatever authorizer the cluster runs answers; only subjects it knows
// through RBAC bindings can be enumerated.
package exposure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memoTTL is how long an answer is held for the same bindings: a role's
// rules may change without its bindings changing.
const memoTTL = time.Minute

// Access is one request that would reveal a Secret's data, or, for a
// Secret no admission policy guards, change it.
type Access struct {
	Verb, Group, Resource, Subresource string
	// Named is true for the Secret itself (get by name); Name is then the
	// Secret's.
	Named bool
	Name  string
}

// Target is a Secret the check covers.
type Target struct {
	// Name is the Secret's.
	Name string
	// Unguarded is true for a Secret whose writes no admission policy
	// guards (the account Secrets are guarded by credo-account-secrets):
	// whoever may update, patch or delete it may put a value of their own
	// where the consumer reads it, and is found too.
	Unguarded bool
}

// writes change an unguarded Secret.
var writes = []string{"update", "patch", "delete"}

func (a Access) String() string {
	r := a.Resource
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Named && a.Name != "" {
		r += "/" + a.Name
	}
	return a.Verb + " " + r
}

// accesses reveal a Secret of the namespace to whoever holds one.
var accesses = func() []Access {
	out := []Access{
		{Verb: "get", Resource: "secrets", Named: true},
		{Verb: "list", Resource: "secrets"},
		{Verb: "watch", Resource: "secrets"},
		{Verb: "create", Resource: "pods"},
		{Verb: "create", Resource: "pods", Subresource: "exec"},
		{Verb: "create", Resource: "pods", Subresource: "attach"},
		{Verb: "create", Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"},
		{Verb: "patch", Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"},
		{Verb: "create", Group: "kustomize.toolkit.fluxcd.io", Resource: "kustomizations"},
	}
	for _, w := range []struct{ group, resource string }{
		{"apps", "deployments"}, {"apps", "statefulsets"}, {"apps", "daemonsets"}, {"apps", "replicasets"},
		{"batch", "jobs"}, {"batch", "cronjobs"}, {"", "replicationcontrollers"},
	} {
		out = append(out, Access{Verb: "create", Group: w.group, Resource: w.resource}, Access{Verb: "patch", Group: w.group, Resource: w.resource})
	}
	return out
}()

// Exposure is the first subject found that may reveal the Secret, and how.
type Exposure struct {
	Subject rbacv1.Subject
	Access  Access
	// Binding is the binding that names the subject, "<namespace>/<name>"
	// for a RoleBinding.
	Binding string
}

func (e *Exposure) String() string {
	return fmt.Sprintf("%s may %s (bound by %s)", SubjectString(e.Subject), e.Access, e.Binding)
}

// SubjectString writes a subject as ParseSubject reads it.
func SubjectString(s rbacv1.Subject) string {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		return "serviceaccount:" + s.Namespace + ":" + s.Name
	case rbacv1.GroupKind:
		return "group:" + s.Name
	default:
		return "user:" + s.Name
	}
}

// ParseSubject reads "user:<name>", "group:<name>" or
// "serviceaccount:<namespace>:<name>".
func ParseSubject(s string) (rbacv1.Subject, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if ok && rest != "" {
		switch kind {
		case "user":
			return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: rest}, nil
		case "group":
			return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: rest}, nil
		case "serviceaccount":
			if ns, name, ok := strings.Cut(rest, ":"); ok && ns != "" && name != "" {
				return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}, nil
			}
		}
	}
	return rbacv1.Subject{}, fmt.Errorf("%q is not user:<name>, group:<name> or serviceaccount:<namespace>:<name>", s)
}

// Checker checks namespaces. Build it with New.
type Checker struct {
	reader  client.Reader
	writer  client.Client
	trusted []rbacv1.Subject
	memo    *utilcache.LRUExpireCache
}

// New returns a Checker listing bindings with reader (uncached: a binding
// made a moment ago counts), asking SubjectAccessReviews through writer,
// and trusting the subjects given besides Kubernetes' own components.
func New(reader client.Reader, writer client.Client, trusted []rbacv1.Subject) *Checker {
	return &Checker{reader: reader, writer: writer, trusted: trusted, memo: utilcache.NewLRUExpireCache(1024)}
}

// Check returns the first subject, bound in namespace or cluster-wide,
// neither trusted nor one of consumers, that may reveal one of the Secrets
// targets of namespace (or change an unguarded one); nil when there is
// none.
func (c *Checker) Check(ctx context.Context, namespace string, targets []Target, consumers []rbacv1.Subject) (*Exposure, error) {
	checked := checks(targets)
	var rbs rbacv1.RoleBindingList
	if err := c.reader.List(ctx, &rbs, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing the RoleBindings of %s: %w", namespace, err)
	}
	var crbs rbacv1.ClusterRoleBindingList
	if err := c.reader.List(ctx, &crbs); err != nil {
		return nil, fmt.Errorf("listing the ClusterRoleBindings: %w", err)
	}
	type bound struct {
		subject rbacv1.Subject
		binding string
	}
	var subjects []bound
	seen := map[string]bool{}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", namespace)
	for _, a := range checked {
		fmt.Fprintf(h, "a %s\x00", a)
	}
	for _, s := range consumers {
		fmt.Fprintf(h, "c %s\x00", SubjectString(s))
	}
	add := func(binding, rv string, ss []rbacv1.Subject) {
		fmt.Fprintf(h, "%s@%s\x00", binding, rv)
		for _, s := range ss {
			key := SubjectString(s)
			if seen[key] || c.isTrusted(s) || slices.ContainsFunc(consumers, func(x rbacv1.Subject) bool { return SubjectString(x) == key }) {
				continue
			}
			seen[key] = true
			subjects = append(subjects, bound{s, binding})
		}
	}
	for _, b := range rbs.Items {
		add(b.Namespace+"/"+b.Name, b.ResourceVersion, b.Subjects)
	}
	for _, b := range crbs.Items {
		add(b.Name, b.ResourceVersion, b.Subjects)
	}
	key := hex.EncodeToString(h.Sum(nil))
	if v, ok := c.memo.Get(key); ok {
		return v.(*Exposure), nil
	}
	sort.SliceStable(subjects, func(i, j int) bool { return SubjectString(subjects[i].subject) < SubjectString(subjects[j].subject) })
	for _, b := range subjects {
		for _, a := range checked {
			allowed, err := c.allowed(ctx, b.subject, namespace, a)
			if err != nil {
				return nil, err
			}
			if allowed {
				e := &Exposure{Subject: b.subject, Access: a, Binding: b.binding}
				c.memo.Add(key, e, memoTTL)
				return e, nil
			}
		}
	}
	c.memo.Add(key, (*Exposure)(nil), memoTTL)
	return nil, nil
}

// checks are the accesses that reveal or change targets: the named ones
// for each target, then those of the whole namespace once.
func checks(targets []Target) []Access {
	var out []Access
	for _, t := range targets {
		for _, a := range accesses {
			if a.Named {
				a.Name = t.Name
				out = append(out, a)
			}
		}
		if t.Unguarded {
			for _, v := range writes {
				out = append(out, Access{Verb: v, Resource: "secrets", Named: true, Name: t.Name})
			}
		}
	}
	if slices.ContainsFunc(targets, func(t Target) bool { return t.Unguarded }) {
		// Deleting every Secret of the namespace, then creating one of the
		// name with a value of one's own, replaces an unguarded Secret too.
		out = append(out, Access{Verb: "deletecollection", Resource: "secrets"})
	}
	for _, a := range accesses {
		if !a.Named {
			out = append(out, a)
		}
	}
	return out
}

// isTrusted reports whether s is trusted: named in the trusted list, or
// one of Kubernetes' own components (system: users and groups, the
// ServiceAccounts of kube-system). The groups every user or every
// ServiceAccount is in are never trusted.
func (c *Checker) isTrusted(s rbacv1.Subject) bool {
	if s.Kind == rbacv1.UserKind {
		// A ServiceAccount named as a user.
		if rest, ok := strings.CutPrefix(s.Name, "system:serviceaccount:"); ok {
			if ns, name, ok := strings.Cut(rest, ":"); ok {
				s = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
			}
		}
	}
	key := SubjectString(s)
	trusted := func(k string) bool {
		return slices.ContainsFunc(c.trusted, func(t rbacv1.Subject) bool { return SubjectString(t) == k })
	}
	if trusted(key) {
		return true
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		// Trusted with the group of its namespace's ServiceAccounts.
		return s.Namespace == "kube-system" || trusted("group:system:serviceaccounts:"+s.Namespace)
	case rbacv1.GroupKind:
		switch {
		case s.Name == "system:authenticated", s.Name == "system:unauthenticated", s.Name == "system:serviceaccounts":
			return false
		case strings.HasPrefix(s.Name, "system:serviceaccounts:"):
			return s.Name == "system:serviceaccounts:kube-system"
		}
		return strings.HasPrefix(s.Name, "system:")
	default:
		return strings.HasPrefix(s.Name, "system:")
	}
}

// allowed asks kube-apiserver whether s may make the access a in
// namespace.
func (c *Checker) allowed(ctx context.Context, s rbacv1.Subject, namespace string, a Access) (bool, error) {
	spec := authzv1.SubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
		Namespace: namespace, Verb: a.Verb, Group: a.Group, Resource: a.Resource, Subresource: a.Subresource,
	}}
	if a.Named {
		spec.ResourceAttributes.Name = a.Name
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		spec.User = "system:serviceaccount:" + s.Namespace + ":" + s.Name
		spec.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + s.Namespace}
	case rbacv1.GroupKind:
		spec.User, spec.Groups = "credo:exposure-probe", []string{s.Name}
	default:
		spec.User = s.Name
	}
	sar := &authzv1.SubjectAccessReview{Spec: spec}
	if err := c.writer.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking kube-apiserver whether %s may %s in %s: %w", SubjectString(s), a, namespace, err)
	}
	return sar.Status.Allowed, nil
}
