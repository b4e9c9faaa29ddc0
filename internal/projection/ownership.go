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

package projection

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trustv1 "github.com/credo-dev/credo/api/trust/v1alpha1"
	"github.com/credo-dev/credo/internal/fieldowner"
	"github.com/credo-dev/credo/internal/release"
)

// Owner is what a projection is owner-referenced to, and garbage-collected
// with: the release's HelmRelease (ReleaseOwner), or for a platform anchor
// its TrustAnchor (AnchorOwner). The reference never blocks the owner's
// deletion.
type Owner struct {
	// Release names the projection: <release>.tenant-ca.
	Release string
	// Ref is the projection's one owner reference.
	Ref metav1.OwnerReference
}

// ReleaseOwner is the owner of a release's projection: its HelmRelease.
func ReleaseOwner(hr *helmv2.HelmRelease) Owner {
	return Owner{Release: hr.Name, Ref: release.OwnerReference(hr)}
}

// AnchorOwner is the owner of the projection of an anchor no HelmRelease
// stands for: the TrustAnchor itself, so that deleting it deletes the
// projection.
func AnchorOwner(ta *trustv1.TrustAnchor) Owner {
	return Owner{Release: ta.Spec.Release, Ref: metav1.OwnerReference{
		APIVersion:         trustv1.GroupVersion.String(),
		Kind:               trustv1.TrustAnchorKind,
		Name:               ta.Name,
		UID:                ta.UID,
		BlockOwnerDeletion: ptr.To(false),
	}}
}

// ownerID is what identifies a projection's owner reference.
type ownerID struct {
	uid  types.UID
	kind string
}

// ownerOf is the owner of desired, a projection as a Writer writes it.
func ownerOf(desired metav1.Object) ownerID {
	ref := desired.GetOwnerReferences()[0]
	return ownerID{uid: ref.UID, kind: ref.Kind}
}

// owns reports whether the Secret was written by this writer's field
// owner; a writer without a field owner owns nothing.
func (w *Writer) owns(s metav1.Object) bool {
	return fieldowner.Wrote(s, w.FieldOwner)
}

// staleOwner reports whether s has an owner reference of a kind a
// projection is owned by (a HelmRelease, a TrustAnchor) to anything but
// owner: the projection moved from one owner to the other (an anchor
// declared with spec.owner TrustAnchor in place of a discovered one), and
// garbage collection would keep it for as long as the former owner
// exists. An apply cannot remove the reference the create wrote, so it is
// replaced. Owner references of other kinds are somebody else's.
func staleOwner(s metav1.Object, owner ownerID) bool {
	for _, ref := range s.GetOwnerReferences() {
		if ref.UID != owner.uid && ownerKind(ref) {
			return true
		}
	}
	return false
}

// ownerKind reports whether ref is to a kind that owns projections.
func ownerKind(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	return (gv.Group == helmv2.GroupVersion.Group && ref.Kind == helmv2.HelmReleaseKind) ||
		(gv.Group == trustv1.GroupVersion.Group && ref.Kind == trustv1.TrustAnchorKind)
}
