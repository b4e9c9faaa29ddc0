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

package release

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credo-dev/credo/internal/publish/fluxartifact"
	"github.com/credo-dev/credo/internal/publish/signing"
)

// source-controller refuses, with its own condition, what the release did
// not sign: the genuine artifact checked against another key, and an
// artifact changed after the release (a ClusterRoleBinding slipped into
// config/) pushed with no signature, as someone with write access to the
// registry but not the key would.
//
// It does not refuse the changed artifact when the genuine signature is
// copied to its digest's .sig tag: source-controller (v1.9.6, and v1.10.1)
// calls cosign's verification without a claim verifier, so the signed
// payload's digest is never compared with the artifact's (`cosign verify`
// compares them). The last check below records that, so that it fails the
// day Flux binds signatures to digests; until then, the install guide has
// users pin the release's digest (spec.ref.digest), which no retag moves.
func testVerificationRefuses(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	otherKey, err := signing.GenerateKey()
	g.Expect(err).NotTo(HaveOccurred())
	other, err := signing.NewSigner(otherKey, nil)
	g.Expect(err).NotTo(HaveOccurred())
	otherPub, err := other.PublicKeyPEM()
	g.Expect(err).NotTo(HaveOccurred())
	createPublicKeySecret(t, g, "not-credo-cosign", otherPub)
	createPublicKeySecret(t, g, "credo-cosign-verify", publicKey(g))

	repo := pushed(rel.Manifests.Ref)
	applyObject(g, verifiedOCIRepository("wrong-key", repo, installTag, "not-credo-cosign"))
	t.Cleanup(func() { deleteOCIRepository("wrong-key") })

	// The tampered artifact: the release's config/ plus a binding that
	// makes every authenticated user cluster-admin.
	dir := filepath.Join(t.TempDir(), "manifests")
	g.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(relOptions.Out, "manifests")))).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "rbac", "zz-everyone-admin.yaml"), []byte(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: everyone-admin
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:authenticated"}]
`), 0o644)).To(Succeed())
	tampered, err := fluxartifact.Build(dir, fluxartifact.Meta{Source: "https://github.com/credo-dev/credo",
		Revision: installTag + "@sha1:" + rel.Commit, Created: rel.Created})
	g.Expect(err).NotTo(HaveOccurred())
	tamperedDigest, err := tampered.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tamperedDigest).NotTo(Equal(rel.Manifests.Digest))
	base := registryPrefix + "/manifests/credo"
	g.Expect(remote.Write(ref(g, base+":v0.0.0-tampered-unsigned"), tampered, remote.WithContext(ctx))).To(Succeed())
	applyObject(g, verifiedOCIRepository("tampered-unsigned", repo, "v0.0.0-tampered-unsigned", "credo-cosign-verify"))
	t.Cleanup(func() { deleteOCIRepository("tampered-unsigned") })
	sourceRefused(g, "tampered-unsigned")
	sourceRefused(g, "wrong-key")

	// The genuine artifact with the genuine key passes: the refusals are
	// the signatures', not the registry's or the set-up's.
	applyObject(g, verifiedOCIRepository("genuine", repo, installTag, "credo-cosign-verify"))
	t.Cleanup(func() { deleteOCIRepository("genuine") })
	sourceVerified(g, "genuine")

	// The replayed signature.
	g.Expect(remote.Write(ref(g, base+":v0.0.0-tampered"), tampered, remote.WithContext(ctx))).To(Succeed())
	genuine, err := remote.Image(ref(g, base+":"+signing.Tag(rel.Manifests.Digest)), remote.WithContext(ctx))
	g.Expect(err).NotTo(HaveOccurred(), "the release's signature of its manifests is in the registry")
	g.Expect(remote.Write(ref(g, base+":"+signing.Tag(tamperedDigest)), genuine, remote.WithContext(ctx))).To(Succeed())
	applyObject(g, verifiedOCIRepository("tampered", repo, "v0.0.0-tampered", "credo-cosign-verify"))
	t.Cleanup(func() { deleteOCIRepository("tampered") })
	sourceVerified(g, "tampered")
	g.Expect(ociRepository(g, "tampered").Status.Artifact.Revision).To(HaveSuffix("@"+tamperedDigest.String()),
		"source-controller now binds a signature to its artifact's digest: refuse the replay here (sourceRefused) "+
			"and drop the digest pinning advice from docs/guides/install-with-flux.md")
}

// verifiedOCIRepository is an OCIRepository of url:tag on the loopback
// registry whose signature source-controller checks with cosign against
// the public key in the Secret keySecret.
func verifiedOCIRepository(repoName, url, tag, keySecret string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1",
		"kind":       "OCIRepository",
		"metadata":   map[string]any{"name": repoName, "namespace": "flux-system"},
		"spec": map[string]any{
			"interval": "10m",
			"url":      url,
			"insecure": true,
			"ref":      map[string]any{"tag": tag},
			"verify": map[string]any{
				"provider":  "cosign",
				"secretRef": map[string]any{"name": keySecret},
			},
			"timeout": (60 * time.Second).String(),
		},
	}}
}

func ref(g Gomega, s string) name.Reference {
	r, err := name.ParseReference(s)
	g.Expect(err).NotTo(HaveOccurred())
	return r
}
