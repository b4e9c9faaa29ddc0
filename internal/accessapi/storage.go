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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	"github.com/credo-dev/credo/internal/metrics"
)

// MintREST is the create-only storage of mints: nothing is persisted; the
// response carries the password once.
type MintREST = createOnly[*accessv1.Mint]

// NewMintREST returns the storage of mints backed by ops.
func NewMintREST(ops *Operations) *MintREST {
	return &MintREST{
		kind: "Mint", singular: "mint", operation: metrics.OperationMint, succeeded: metrics.Minted,
		newObject: func() *accessv1.Mint { return &accessv1.Mint{} },
		create:    accountWrite(ops.Mint, mintSpec, mintStatus),
	}
}

// RevocationREST is the create-only storage of revocations.
type RevocationREST = createOnly[*accessv1.Revocation]

// NewRevocationREST returns the storage of revocations backed by ops.
func NewRevocationREST(ops *Operations) *RevocationREST {
	return &RevocationREST{
		kind: "Revocation", singular: "revocation", operation: metrics.OperationRevoke, succeeded: metrics.Revoked,
		newObject: func() *accessv1.Revocation { return &accessv1.Revocation{} },
		create:    accountWrite(ops.Revoke, revocationSpec, revocationStatus),
	}
}

func mintSpec(m *accessv1.Mint) *accessv1.AccountRequestSpec { return &m.Spec }

func revocationSpec(rv *accessv1.Revocation) *accessv1.AccountRequestSpec { return &rv.Spec }

// mintStatus tells the new password once, and the Secret version it is in.
func mintStatus(m *accessv1.Mint, res *Result) {
	m.Status = accessv1.MintStatus{Username: res.Username, Password: res.Password,
		SecretName: res.SecretName, ResourceVersion: res.ResourceVersion, MintedAt: metav1.NewTime(res.At)}
}

// revocationStatus tells the Secret version the revocation is in.
func revocationStatus(rv *accessv1.Revocation, res *Result) {
	rv.Status = accessv1.RevocationStatus{SecretName: res.SecretName, ResourceVersion: res.ResourceVersion, RevokedAt: metav1.NewTime(res.At)}
}

// accountWrite is the create of a write to an account, a mint or a
// revocation: write (Operations.Mint or Revoke) acts on the account the
// request's spec names, and status fills the request's status from the
// result.
func accountWrite[T apiObject](
	write func(ctx context.Context, namespace string, spec accessv1.AccountRequestSpec, user string) (*Result, error),
	spec func(T) *accessv1.AccountRequestSpec, status func(T, *Result),
) func(ctx context.Context, namespace, user string, out T) (time.Time, []string, error) {
	return func(ctx context.Context, namespace, user string, out T) (time.Time, []string, error) {
		res, err := write(ctx, namespace, *spec(out), user)
		if err != nil {
			return time.Time{}, nil, err
		}
		status(out, res)
		return res.At, res.Warnings, nil
	}
}
