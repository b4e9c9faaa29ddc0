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

// Package projection is the one write path of the trust anchors: it guards
// a lifted CA value and writes it, re-encoded, as the key-free Secret
// <release>.tenant-ca, owner-referenced to the release's HelmRelease (or,
// for a platform anchor, to its TrustAnchor: Owner). Every leg of source
// discovery writes through Write, so the guard cannot be bypassed by a new
// leg.
//
// # Guarantees
//
// Every Write re-runs the PEM guard (internal/pem) before anything else: a
// refused value sends no request and leaves the existing projection as it
// was. A Writer with a Cache then decides from the projection's cached
// metadata alone, when it can (writeFromCache): the projection carries the
// SHA-256 of its ca.crt (DigestAnnotation), and the cache keeps the
// managers of its managedFields (CacheTransform), so a current projection
// costs no request and a rotation one write, preconditioned on the cached
// resourceVersion. When the metadata cannot settle it (a Secret with
// another manager's entry, the cache lagging), or without a Cache, it reads
// the Secret once, uncached, and makes at most one write:
//
//   - absent: create, not apply, so that a foreign Secret created since the
//     read fails with AlreadyExists (ErrCollision) instead of being merged;
//   - present without an entry of credo's field manager: ErrCollision, and
//     nothing is written;
//   - present, ours and current: nothing is written;
//   - present, ours, ca.crt alone: server-side apply, with the resourceVersion
//     read as a precondition;
//   - present, ours, with more keys than ca.crt, or an owner reference to a
//     former owner (a HelmRelease or TrustAnchor other than Owner's; see
//     staleOwner): update (replace), with the resourceVersion read as a
//     precondition.
//
// # What comes from fluxcd/pkg/ssa
//
// The apply payload is the desired Secret normalised by ssa's normalize
// package, applied under credo's field manager with forced ownership: the
// request ssa's ResourceManager sends. The ownership check
// (internal/fieldowner, shared with the account writer) matches
// managedFields by ssa's FieldManager rule (exact name, update or apply,
// main resource), the rule kustomize-controller uses to find field managers.
//
// ssa.ResourceManager.Apply itself is not used, because it would break three
// guarantees. It reads the object again and sends a server-side dry-run
// before each apply to detect drift: two requests more per write than this
// writer, which has already read the object (it needs its managedFields) and
// detects drift locally (metadataCurrent, the ca.crt bytes). It keeps the
// object it read to itself, so it cannot refuse a Secret without credo's field
// manager before writing. And it creates an absent object by apply, which
// merges into a foreign Secret created since the read. So create, the
// ownership refusal and the no-op are written here.
//
// The replace of an over-full projection stays an update: apply cannot remove
// a key another manager owns, and ssa's way to take such fields over
// (ApplyCleanupOptions.FieldManagers, a JSON patch of managedFields before
// the apply) is one request more and carries no resourceVersion precondition.
package projection

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/pem"
)

// ErrCollision is returned when a Secret of the projection's name exists
// that this writer did not create. It is never written.
var ErrCollision = errors.New("a Secret of that name exists that credo did not create")

// Writer writes projections.
type Writer struct {
	// Client writes; Reader reads uncached (the projection's current data and
	// managed fields).
	Client client.Client
	Reader client.Reader
	// Cache, when set, reads the projection's metadata from a cache whose
	// Secrets are transformed by CacheTransform.
	Cache client.Reader
	// Echoes, when set, records the resourceVersion of every write.
	Echoes *Echoes
	// FieldOwner is the field manager of every write; a Secret without an
	// entry of this manager is foreign.
	FieldOwner string
	// TenantCALabel is stamped on every projection, e.g.
	// internal.cozystack.io/tenant-ca.
	TenantCALabel string
	// Adopt, when set, recognizes projections another controller claims:
	// they are never written but as it allows.
	Adopt *Adoption
}

// Result describes a successful Write.
type Result struct {
	// Bundle is what was projected.
	Bundle *pem.Bundle
	// Changed is true when the projection's content changed (or was created).
	Changed bool
	// Adopted is true when the write took over another controller's
	// projection (Adoption).
	Adopted bool
}

// Write guards raw, the value lifted from the source, and projects it into
// the Secret <release>.tenant-ca in namespace, owner-referenced to owner. A
// refused value (private key, anything not a certificate) returns the
// guard's *pem.Error and writes nothing, leaving any existing projection as
// it was. A foreign Secret of the name returns ErrCollision.
func (w *Writer) Write(ctx context.Context, namespace string, owner Owner, raw []byte) (*Result, error) {
	bundle, err := pem.Parse(raw)
	if err != nil {
		return nil, err
	}
	desired := w.desired(namespace, owner, bundle)
	key := client.ObjectKeyFromObject(desired)
	res, err := w.write(ctx, desired, bundle, w.Cache != nil)
	if err != nil {
		// Nothing in flight any more: no event is an echo until the next write.
		w.Echoes.forget(key)
		return nil, err
	}
	if w.Echoes.doubted(key) {
		// An event taken for this write's echo while it was in flight was
		// another version: somebody else wrote meanwhile. Read and repair.
		again, err := w.write(ctx, desired, bundle, false)
		if err != nil {
			w.Echoes.forget(key)
			return nil, err
		}
		again.Changed = again.Changed || res.Changed
		return again, nil
	}
	return res, nil
}

// write decides from the cache when fromCache and it can, else from an
// uncached read, and makes at most one write.
func (w *Writer) write(ctx context.Context, desired *corev1.Secret, bundle *pem.Bundle, fromCache bool) (*Result, error) {
	if fromCache {
		res, err := w.writeFromCache(ctx, desired, bundle)
		if !errors.Is(err, errStale) {
			return res, err
		}
	}
	var current corev1.Secret
	err := w.Reader.Get(ctx, client.ObjectKeyFromObject(desired), &current)
	switch {
	case apierrors.IsNotFound(err):
		return w.create(ctx, desired, bundle)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s: %w", desired.Name, err)
	}
	changed := !bytes.Equal(current.Data[trustv1.ProjectionKey], bundle.PEM)
	if w.Adopt.claimed(&current) {
		// Claimed by another controller, even if this writer wrote it once
		// (and handed it over): taken over only when allowed.
		return w.adopt(ctx, &current, desired, bundle, changed)
	}
	if !w.owns(&current) {
		return nil, ErrCollision
	}
	if len(current.Data) != 1 || staleOwner(&current, ownerOf(desired)) {
		// Someone added a key, or the projection has a former owner. Apply
		// cannot remove a field another manager, or the create, wrote;
		// replace the data and owner references with an update, under the
		// same precondition.
		return w.replace(ctx, &current, desired, bundle, changed)
	}
	if !changed && current.Type == corev1.SecretTypeOpaque && w.metadataCurrent(&current, desired.Annotations[DigestAnnotation], ownerOf(desired)) {
		w.expect(desired)
		w.answered(desired, current.ResourceVersion)
		return &Result{Bundle: bundle, Changed: false}, nil
	}
	return w.apply(ctx, current.ResourceVersion, desired, bundle, changed)
}
