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

package main

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
)

// summary is what `kubectl credo get` shows of one namespace. Each section
// is read on its own, with the user's credentials: a section the user may
// not read says so and hides none of the others.
type summary struct {
	Namespace string
	Anchors   section[trustv1.TrustAnchor]
	Accounts  section[accessv1.Account]
	Workloads section[enrollv1.Workload]
	Tokens    section[enrollv1.JoinToken]
}

// section is the objects of one kind, or why they could not be read.
type section[T any] struct {
	Items []T
	Err   error
}

// The resources the sections list, as RBAC and error messages name them.
const (
	anchorsResource   = "trustanchors.trust.credo.dev"
	accountsResource  = "accounts.access.credo.dev"
	workloadsResource = "workloads.enrollment.credo.dev"
	tokensResource    = "jointokens.enrollment.credo.dev"
)

// readSummary lists the four kinds in ns. It never fails as a whole: every
// error is kept in its section.
func readSummary(ctx context.Context, c client.Reader, ns string) *summary {
	s := &summary{Namespace: ns}
	var anchors trustv1.TrustAnchorList
	if s.Anchors.Err = c.List(ctx, &anchors, client.InNamespace(ns)); s.Anchors.Err == nil {
		s.Anchors.Items = anchors.Items
	}
	var accounts accessv1.AccountList
	if s.Accounts.Err = c.List(ctx, &accounts, client.InNamespace(ns)); s.Accounts.Err == nil {
		s.Accounts.Items = accounts.Items
	}
	var workloads enrollv1.WorkloadList
	if s.Workloads.Err = c.List(ctx, &workloads, client.InNamespace(ns)); s.Workloads.Err == nil {
		s.Workloads.Items = workloads.Items
	}
	var tokens enrollv1.JoinTokenList
	if s.Tokens.Err = c.List(ctx, &tokens, client.InNamespace(ns)); s.Tokens.Err == nil {
		s.Tokens.Items = tokens.Items
	}
	return s
}

// errUnreadable is returned by get when a section could not be read for a
// reason other than RBAC or an API the cluster does not serve: the summary is
// printed, and the exit status says it is incomplete.
var errUnreadable = errors.New("the summary is incomplete")

// unreadable says in one line why a section is not shown, and whether that
// is a failure of the command (false for RBAC and for an API the cluster
// does not serve, which are answers, not failures).
func unreadable(err error, resource, ns string) (line string, failed bool) {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("not shown: you may not list %s in %s (forbidden by RBAC)", resource, ns), false
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err):
		return fmt.Sprintf("not shown: this cluster does not serve %s", resource), false
	default:
		return fmt.Sprintf("could not be read: %v", err), true
	}
}
