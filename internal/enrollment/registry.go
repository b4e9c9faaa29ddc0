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

package enrollment

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// nameIndex indexes JoinTokens and Workloads by name across namespaces: an
// agent presents a token id or a UUID, not a namespace.
const nameIndex = "enrollment.credo.dev/name"

// pendingIndex indexes the Workloads still waiting for their first
// certificate (no serial recorded, not being deleted) by spec.token: a
// token's pending registrations are counted in the cache from its pending
// Workloads alone, so that the count costs the same whatever the size of
// the fleet the token already enrolled.
const pendingIndex = "enrollment.credo.dev/pending-token"

// IndexFields registers the indexes the server's cached reader needs.
func IndexFields(ctx context.Context, indexer client.FieldIndexer) error {
	byName := func(o client.Object) []string { return []string{o.GetName()} }
	if err := indexer.IndexField(ctx, &enrollv1.JoinToken{}, nameIndex, byName); err != nil {
		return fmt.Errorf("indexing JoinTokens by name: %w", err)
	}
	if err := indexer.IndexField(ctx, &enrollv1.Workload{}, nameIndex, byName); err != nil {
		return fmt.Errorf("indexing Workloads by name: %w", err)
	}
	pendingOfToken := func(o client.Object) []string {
		if w, ok := o.(*enrollv1.Workload); ok && w.Spec.Token != "" && isPending(w) {
			return []string{w.Spec.Token}
		}
		return nil
	}
	if err := indexer.IndexField(ctx, &enrollv1.Workload{}, pendingIndex, pendingOfToken); err != nil {
		return fmt.Errorf("indexing pending Workloads by token: %w", err)
	}
	return nil
}

// cachedTokens returns the JoinTokens named id in the cache (in any
// namespace; ids are random, so at most one in practice).
func (s *Server) cachedTokens(ctx context.Context, id string) ([]enrollv1.JoinToken, *apiError) {
	var list enrollv1.JoinTokenList
	if err := s.Reader.List(ctx, &list, client.MatchingFields{nameIndex: id}); err != nil {
		return nil, unavailable("reading join tokens", err)
	}
	return list.Items, nil
}

// findToken returns the JoinToken whose id and secret match tok, among
// cached (the cache's tokens of that id). Any mismatch is the same
// TokenInvalid answer, so the answer tells nothing about which ids exist.
func (s *Server) findToken(ctx context.Context, tok jointoken.Token, cached []enrollv1.JoinToken) (*enrollv1.JoinToken, *apiError) {
	if len(cached) == 0 {
		// A token minted a moment ago may not be in the cache yet: ask the
		// API server, uncached, within the server's lookup budget (see
		// uncachedTokens); the caller's address is rate-limited after a few
		// failures.
		var e *apiError
		if cached, e = s.uncachedTokens(ctx, tok.ID); e != nil {
			return nil, e
		}
	}
	for i := range cached {
		jt := &cached[i]
		if jointoken.SecretMatches(jt.Spec.SecretHash, tok.Secret) {
			return jt, nil
		}
	}
	return nil, &apiError{status: http.StatusUnauthorized, reason: enrollapi.ReasonTokenInvalid, msg: "the join token is not valid"}
}

// usableToken checks a matching token's state and its policy.
func (s *Server) usableToken(ctx context.Context, jt *enrollv1.JoinToken) (*enrollv1.EnrollmentPolicy, *apiError) {
	if jt.Spec.Revoked {
		return nil, &apiError{status: 401, reason: enrollapi.ReasonTokenRevoked, msg: fmt.Sprintf("join token %s was revoked", jt.Name)}
	}
	if !jt.UsableAt(s.now(), s.Limits.MaxTokenLifetime) {
		end := jt.EnrollsUntil(s.Limits.MaxTokenLifetime)
		msg := fmt.Sprintf("join token %s expired at %s", jt.Name, end.UTC().Format(time.RFC3339))
		if end.Before(jt.Spec.ExpiresAt.Time) {
			// Whatever its record says, a token enrolls for at most the
			// platform's maximum token lifetime after it was created.
			msg += fmt.Sprintf(": tokens enroll for at most %s (the platform's maximum token lifetime) after they are minted", s.Limits.MaxTokenLifetime)
		}
		return nil, &apiError{status: 401, reason: enrollapi.ReasonTokenExpired, msg: msg}
	}
	return s.usablePolicy(ctx, jt.Namespace, jt.Spec.Policy)
}

func (s *Server) usablePolicy(ctx context.Context, namespace, name string) (*enrollv1.EnrollmentPolicy, *apiError) {
	var p enrollv1.EnrollmentPolicy
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err := s.Reader.Get(ctx, key, &p)
	if apierrors.IsNotFound(err) {
		// A policy created a moment before its token may not be in the
		// cache yet, while the token was found uncached: confirm with the
		// API server before calling the policy gone. Only a caller with a
		// matching token or a valid certificate pays this read.
		err = s.APIReader.Get(ctx, key, &p)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &apiError{status: 403, reason: enrollapi.ReasonPolicyRevoked,
				msg: fmt.Sprintf("enrollment policy %s/%s no longer exists", namespace, name)}
		}
		return nil, unavailable("reading the enrollment policy", err)
	}
	if p.Spec.Revoked {
		return nil, &apiError{status: 403, reason: enrollapi.ReasonPolicyRevoked,
			msg: fmt.Sprintf("enrollment policy %s/%s is revoked", namespace, name)}
	}
	// Refused, not clamped: the policy's status says it is Stalled, and the
	// server does what the status says. Nothing is signed under it until an
	// admin lowers it; its workloads renew again then, within their grace.
	if problems := s.Limits.PolicyProblems(&p); len(problems) > 0 {
		return nil, &apiError{status: http.StatusForbidden, reason: enrollapi.ReasonPolicyExceedsLimits,
			msg: fmt.Sprintf("enrollment policy %s/%s asks for more than the platform allows, so nothing is signed under it: %s",
				namespace, name, strings.Join(problems, "; "))}
	}
	return &p, nil
}

// workloadCheck refuses a Workload the request may not act on.
type workloadCheck func(*enrollv1.Workload) *apiError

// findWorkload returns the Workload named uuid in any namespace (a renewal
// names only the UUID), as workload does. The cache says where it is; a
// Workload not in the cache yet is looked up on the API server.
func (s *Server) findWorkload(ctx context.Context, uuid string, check workloadCheck) (*enrollv1.Workload, *apiError) {
	var list enrollv1.WorkloadList
	if err := s.Reader.List(ctx, &list, client.MatchingFields{nameIndex: uuid}); err != nil {
		return nil, unavailable("reading workloads", err)
	}
	if len(list.Items) == 0 {
		if err := s.APIReader.List(ctx, &list, client.MatchingFieldsSelector{Selector: nameSelector(uuid)}); err != nil {
			return nil, unavailable("reading workloads", err)
		}
		if len(list.Items) == 1 {
			// Read uncached: final.
			wl := &list.Items[0]
			return wl, check(wl)
		}
	}
	if len(list.Items) != 1 {
		return nil, workloadNotFound(uuid)
	}
	return s.workload(ctx, &list.Items[0], check)
}

// workload returns cached, a Workload read from the cache, when it passes
// check; otherwise the API server's copy, which the cache may lag behind,
// with the check's refusal of that one (the Workload is returned with it,
// for the refusal's event). A cached copy that passes is only
// as good as its resourceVersion: issue writes conditionally on it, and
// reads again after a conflict.
func (s *Server) workload(ctx context.Context, cached *enrollv1.Workload, check workloadCheck) (*enrollv1.Workload, *apiError) {
	if check(cached) == nil {
		return cached, nil
	}
	fresh, e := s.getWorkload(ctx, cached.Namespace, cached.Name)
	if e != nil {
		return nil, e
	}
	return fresh, check(fresh)
}

// cachedWorkload returns the Workload from the cache, or from the API
// server when the cache does not hold it (yet); then as workload does.
func (s *Server) cachedWorkload(ctx context.Context, namespace, uuid string, check workloadCheck) (*enrollv1.Workload, *apiError) {
	var w enrollv1.Workload
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: uuid}, &w)
	if err == nil {
		return s.workload(ctx, &w, check)
	}
	if !apierrors.IsNotFound(err) {
		return nil, unavailable("reading the workload", err)
	}
	fresh, e := s.getWorkload(ctx, namespace, uuid)
	if e != nil {
		return nil, e
	}
	return fresh, check(fresh)
}

// getWorkload reads the Workload uncached, in the namespace the caller knows.
func (s *Server) getWorkload(ctx context.Context, namespace, uuid string) (*enrollv1.Workload, *apiError) {
	var w enrollv1.Workload
	if err := s.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: uuid}, &w); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, workloadNotFound(uuid)
		}
		return nil, unavailable("reading the workload", err)
	}
	return &w, nil
}

func workloadNotFound(uuid string) *apiError {
	return &apiError{status: 404, reason: enrollapi.ReasonWorkloadNotFound,
		msg: fmt.Sprintf("workload %s is not registered; enroll again with a join token", uuid)}
}

// nameSelector selects objects by name: kube-apiserver serves the
// metadata.name field selector for every kind.
func nameSelector(name string) fields.Selector {
	return fields.OneTermEqualSelector("metadata.name", name)
}
