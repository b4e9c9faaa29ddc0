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
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/jointoken"
)

// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=enrollmentpolicies,verbs=get
// +kubebuilder:rbac:groups=enrollment.credo.dev,resources=jointokens,verbs=create

var joinTokenRequestsResource = accessv1.GroupVersion.WithResource("jointokenrequests").GroupResource()

// maxDescription bounds a token's description, as the JoinToken CRD does.
const maxDescription = 256

// JoinTokenREST is the create-only storage of join token requests: it
// writes the token's record (a hash of its secret) and returns the token once.
type JoinTokenREST = createOnly[*accessv1.JoinTokenRequest]

// NewJoinTokenREST returns the storage of join token requests that reads
// and writes directly against the API server with c; now returns the time,
// time.Now when nil.
func NewJoinTokenREST(c client.Client, now func() time.Time) *JoinTokenREST {
	j := &joinTokens{Client: c, Now: now}
	return &JoinTokenREST{
		kind: "JoinTokenRequest", singular: "jointokenrequest",
		newObject: func() *accessv1.JoinTokenRequest { return &accessv1.JoinTokenRequest{} },
		create:    j.create,
	}
}

// joinTokens mints join tokens.
type joinTokens struct {
	// Client reads and writes directly against the API server.
	Client client.Client
	// Now returns the time; time.Now when nil.
	Now func() time.Time
}

// create mints a join token from the request's policy into out's status.
func (r *joinTokens) create(ctx context.Context, namespace, user string, out *accessv1.JoinTokenRequest) (time.Time, []string, error) {
	spec := out.Spec
	if spec.Policy == "" {
		return time.Time{}, nil, apierrors.NewBadRequest("spec.policy is required")
	}
	if len(spec.Description) > maxDescription {
		return time.Time{}, nil, apierrors.NewBadRequest(fmt.Sprintf("spec.description is longer than %d characters", maxDescription))
	}
	var policy enrollv1.EnrollmentPolicy
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: spec.Policy}, &policy); err != nil {
		if apierrors.IsNotFound(err) {
			return time.Time{}, nil, apierrors.NewNotFound(enrollv1.GroupVersion.WithResource("enrollmentpolicies").GroupResource(), spec.Policy)
		}
		return time.Time{}, nil, internalError(fmt.Errorf("reading EnrollmentPolicy %s: %w", spec.Policy, err))
	}
	lifetime, err := tokenLifetime(&policy, out)
	if err != nil {
		return time.Time{}, nil, err
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	tok, jt, err := r.createRecord(ctx, &policy, user, spec.Description, now.Add(lifetime))
	if err != nil {
		return time.Time{}, nil, err
	}
	out.Status = accessv1.JoinTokenRequestStatus{Token: tok.String(), ID: tok.ID, ExpiresAt: jt.Spec.ExpiresAt}
	return now, nil, nil
}

// tokenLifetime is the lifetime of the token in requests: the policy's
// unless the request asks for a valid one. A revoked policy, or one over
// the platform's limits, mints no token.
func tokenLifetime(policy *enrollv1.EnrollmentPolicy, in *accessv1.JoinTokenRequest) (time.Duration, error) {
	if policy.Spec.Revoked {
		return 0, apierrors.NewForbidden(joinTokenRequestsResource, policy.Name,
			errors.New("the enrollment policy is revoked: it mints no token"))
	}
	if c := conditions.Get(policy, meta.StalledCondition); c != nil && c.Status == metav1.ConditionTrue &&
		c.Reason == enrollv1.ExceedsPlatformLimitReason {
		return 0, apierrors.NewForbidden(joinTokenRequestsResource, policy.Name, fmt.Errorf(
			"the enrollment policy exceeds the platform's limits and mints no token until it is lowered: %s", c.Message))
	}
	lifetime := policy.GetTokenLifetime()
	if in.Spec.Lifetime == nil {
		return lifetime, nil
	}
	if err := validLifetime(in, in.Spec.Lifetime.Duration, lifetime); err != nil {
		return 0, err
	}
	return in.Spec.Lifetime.Duration, nil
}

// createRecord writes the JoinToken, owned by the policy so it goes with
// it. An id already taken (one in 2^80) is answered with a new token.
func (r *joinTokens) createRecord(ctx context.Context, policy *enrollv1.EnrollmentPolicy, user, description string, expires time.Time) (jointoken.Token, *enrollv1.JoinToken, error) {
	for range 3 {
		tok, err := jointoken.New()
		if err != nil {
			return jointoken.Token{}, nil, internalError(err)
		}
		jt := &enrollv1.JoinToken{
			ObjectMeta: metav1.ObjectMeta{Name: tok.ID, Namespace: policy.Namespace},
			Spec: enrollv1.JoinTokenSpec{
				Policy: policy.Name, SecretHash: tok.Hash(), ExpiresAt: metav1.NewTime(expires.UTC().Truncate(time.Second)),
				CreatedBy: user, Description: description,
			},
		}
		if err := controllerutil.SetOwnerReference(policy, jt, r.Client.Scheme()); err != nil {
			return jointoken.Token{}, nil, internalError(err)
		}
		err = r.Client.Create(ctx, jt)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return jointoken.Token{}, nil, internalError(fmt.Errorf("writing the JoinToken record: %w", err))
		}
		return tok, jt, nil
	}
	return jointoken.Token{}, nil, internalError(errors.New("could not find a free token id"))
}

// validLifetime refuses, with 422 naming spec.lifetime, a requested
// lifetime that is not positive or longer than the policy's: a
// non-positive one is never read as "the policy's default".
func validLifetime(in *accessv1.JoinTokenRequest, requested, policyMax time.Duration) error {
	var why string
	switch {
	case requested <= 0:
		why = "must be positive; omit it for the policy's tokenLifetime (" + policyMax.String() + ")"
	case requested > policyMax:
		why = "must be at most the policy's tokenLifetime (" + policyMax.String() + ")"
	default:
		return nil
	}
	return apierrors.NewInvalid(accessv1.GroupVersion.WithKind("JoinTokenRequest").GroupKind(), in.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "lifetime"), requested.String(), why),
	})
}
