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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
)

// conflict reports an account the source may not bring in line with want:
// created for another entry, username, release or owner, or of another
// format (owner and format are immutable). It is left as it is.
func conflict(cur, want *credv1.CredentialAccount) *problem {
	var why string
	switch {
	case cur.Spec.Release != want.Spec.Release || cur.Spec.Username != want.Spec.Username ||
		cur.Labels[entryLabel] != want.Labels[entryLabel] || cur.Labels[credv1.SourceLabel] != want.Labels[credv1.SourceLabel]:
		why = fmt.Sprintf("it was not created for username %s of sources[%s]", quoteKey(want.Spec.Username), want.Labels[entryLabel])
	case cur.GetOwner() != want.GetOwner():
		why = fmt.Sprintf("its owner is %s, the source's is %s, and the owner of an account never changes", cur.GetOwner(), want.GetOwner())
	case !equality.Semantic.DeepEqual(cur.Spec.Format, want.Spec.Format):
		why = fmt.Sprintf("its format is %s, the source's is %s, and the format of an account never changes", cur.Spec.Format.Name, want.Spec.Format.Name)
	case !equality.Semantic.DeepEqual(plaintextRef(cur), plaintextRef(want)):
		why = "its plaintext secretRef is not the source's, and it never changes"
	default:
		return nil
	}
	return &problem{credv1.AccountConflictReason, releaseOf(want), fmt.Sprintf(
		"CredentialAccount %s is left as it is: %s; delete it to have the source create its own", cur.Name, why)}
}

func plaintextRef(a *credv1.CredentialAccount) *credv1.SecretKeyRef {
	if a.Spec.Plaintext == nil {
		return nil
	}
	return a.Spec.Plaintext.SecretRef
}

// update brings the mutable part of a generated account (Secret labels,
// valuesFrom, plaintext consumers) in line with the source.
func (r *AccountSourceReconciler) update(ctx context.Context, cur, want *credv1.CredentialAccount) error {
	if equality.Semantic.DeepEqual(cur.Spec.SecretLabels, want.Spec.SecretLabels) &&
		equality.Semantic.DeepEqual(cur.Spec.ValuesFrom, want.Spec.ValuesFrom) &&
		equality.Semantic.DeepEqual(cur.Spec.Plaintext, want.Spec.Plaintext) {
		return nil
	}
	before := cur.DeepCopy()
	cur.Spec.SecretLabels, cur.Spec.ValuesFrom, cur.Spec.Plaintext = want.Spec.SecretLabels, want.Spec.ValuesFrom, want.Spec.Plaintext
	if err := r.Patch(ctx, cur, client.MergeFrom(before), client.FieldOwner(CredentialFieldOwner)); err != nil {
		return fmt.Errorf("updating account %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return nil
}

// create creates a derived account. An account of its name that the source
// did not create for the same entry is a conflict and is never adopted; a
// refusal of the API server (an invalid username) is a problem of its
// release alone.
func (r *AccountSourceReconciler) create(ctx context.Context, src *credv1.AccountSource, a *credv1.CredentialAccount) (*problem, error) {
	err := r.Create(ctx, a, client.FieldOwner(CredentialFieldOwner))
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsAlreadyExists(err):
		var cur credv1.CredentialAccount
		if err := r.reader().Get(ctx, client.ObjectKeyFromObject(a), &cur); err != nil {
			return nil, fmt.Errorf("reading account %s/%s: %w", a.Namespace, a.Name, err)
		}
		if p := conflict(&cur, a); p != nil {
			if a.Spec.Owner != credv1.OwnerPlatform || cur.GetOwner() == credv1.OwnerPlatform {
				return p, nil
			}
			if cur.Labels[credv1.SourceLabel] == src.Name && squats(&cur, a) {
				// Derived for a release another shard serves.
				p, err := r.makeWay(ctx, &cur, a)
				if err != nil {
					return nil, err
				}
				return p, nil
			}
			if cur.Labels[credv1.SourceLabel] != src.Name {
				// An account the source did not create holds the name of a
				// platform account: the platform account takes a name of its
				// own, which a tenant cannot know in advance, and keeps it.
				return r.createAs(ctx, a, platformFallbackName(src, a))
			}
			return p, nil
		}
		// Created meanwhile, or held by another shard.
		return nil, r.takeOver(ctx, a)
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota"):
		return &problem{credv1.AccountLimitExceededReason, releaseOf(a), fmt.Sprintf("account %s for username %s was refused by a ResourceQuota of the namespace: %v",
			a.Name, quoteKey(a.Spec.Username), err)}, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err):
		return &problem{credv1.UsernameRefusedReason, releaseOf(a), fmt.Sprintf("account %s for username %s was refused: %s",
			a.Name, quoteKey(a.Spec.Username), apierrors.ReasonForError(err))}, nil
	}
	return nil, fmt.Errorf("creating account %s/%s: %w", a.Namespace, a.Name, err)
}

// squats reports a tenant account the source derived for another release
// that holds the name of a platform account want.
func squats(cur, want *credv1.CredentialAccount) bool {
	return want.Spec.Owner == credv1.OwnerPlatform && cur.GetOwner() != credv1.OwnerPlatform && cur.Spec.Release != want.Spec.Release
}

// makeWay deletes a squatting tenant account (platform entries win, its key
// is refused); the platform account is created once it is gone.
func (r *AccountSourceReconciler) makeWay(ctx context.Context, cur, want *credv1.CredentialAccount) (*problem, error) {
	p := &problem{credv1.UsernameRefusedReason, releaseOf(cur), fmt.Sprintf(
		"username %s has the account name %s of a platform account of release %s; its account is deleted",
		quoteKey(cur.Spec.Username), cur.Name, want.Spec.Release)}
	if err := r.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
		return p, fmt.Errorf("deleting account %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	return p, nil
}

// createAs creates a under another name. An account already there is the
// one of an earlier attempt if it is the same account (else a conflict),
// taken over from another shard if need be.
func (r *AccountSourceReconciler) createAs(ctx context.Context, a *credv1.CredentialAccount, name string) (*problem, error) {
	b := a.DeepCopy()
	b.Name = name
	err := r.Create(ctx, b, client.FieldOwner(CredentialFieldOwner))
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return nil, fmt.Errorf("creating account %s/%s: %w", b.Namespace, b.Name, err)
		}
		return nil, nil
	}
	var cur credv1.CredentialAccount
	if err := r.reader().Get(ctx, client.ObjectKeyFromObject(b), &cur); err != nil {
		return nil, fmt.Errorf("reading account %s/%s: %w", b.Namespace, b.Name, err)
	}
	if p := conflict(&cur, b); p != nil {
		return p, nil
	}
	return nil, r.takeOver(ctx, b)
}

// olderThan orders accounts by creation, then name.
func olderThan(a, b *credv1.CredentialAccount) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// identity is what makes a generated account the same account whatever its
// name: namespace, release, entry and username.
func identity(a *credv1.CredentialAccount) string {
	return a.Namespace + "/" + a.Spec.Release + "/" + a.Labels[entryLabel] + "/" + a.Spec.Username
}

// platformFallbackName is the name of a platform account whose own name is
// held by an account the source did not create: its name with a hash of the
// source's UID, the entry and the username, which tenants (who cannot read
// cluster-scoped AccountSources) cannot compute.
func platformFallbackName(src *credv1.AccountSource, a *credv1.CredentialAccount) string {
	sum := sha256.Sum256([]byte(string(src.UID) + "/" + identity(a)))
	base := a.Name
	if len(base) > 253-9 {
		base = strings.TrimRight(base[:253-9], "-.")
	}
	return base + "-" + hex.EncodeToString(sum[:])[:8]
}

// reader reads uncached when it can: an account just created elsewhere may
// not be in the cache yet.
func (r *AccountSourceReconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
