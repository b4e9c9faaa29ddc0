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

// Package release installs credo the way its users do, from a release:
// `make release`'s artifacts (internal/publish.Release, the constructor
// hack/release uses), pushed to a registry on loopback, verified and
// installed by the real source-, kustomize- and helm-controller on a
// control plane where credo's CRDs come only from the release. It also
// reads the image index back and builds the release twice.
package release

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/internal/publish/signing"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// installTag is the version of the release the tests build.
const installTag = "v0.0.0-e2e"

var (
	env *controlplane.Environment
	// rel is the release built for the tests, relOptions what built it.
	rel        *publish.Result
	relOptions publish.Options
	// registryPrefix is where the release is pushed: the loopback
	// registry's host and credo-dev ("127.0.0.1:41234/credo-dev").
	registryPrefix string
)

func TestMain(m *testing.M) {
	// No kube-controller-manager: nothing here needs garbage collection.
	// Only Flux's CRDs: credo's come from the release. Aggregation: the
	// installs wait for the access API's APIService to be Available.
	os.Exit(testenv.Main(m, testenv.Options{
		ControlPlane: controlplane.Options{
			NoControllerManager: true, Aggregation: true,
			CRDPaths: []string{repoPath("config", "testdata", "crds")},
		},
		NoManager: true,
	}, func(ctx context.Context, e *testenv.Env) error {
		env = e.Environment
		for _, ns := range []string{"flux-system", "credo-system"} {
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				return fmt.Errorf("creating namespace %s: %w", ns, err)
			}
		}
		return buildAndPush(ctx)
	}))
}

// buildAndPush builds the release as `make release` does, with a key of
// its own, and pushes it to a registry on loopback.
func buildAndPush(ctx context.Context) error {
	key, err := signing.GenerateKey()
	if err != nil {
		return err
	}
	signer, err := signing.NewSigner(key, nil)
	if err != nil {
		return err
	}
	relOptions = publish.Options{
		Root: controlplane.RepoRoot(), Version: installTag, Out: filepath.Join(env.Dir, "release"),
		Signer: signer, AllowDirty: true,
	}
	if rel, err = publish.Release(ctx, relOptions); err != nil {
		return fmt.Errorf("building the release: %w", err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	registryPrefix = srv.Listener.Addr().String() + "/credo-dev"
	if _, err := publish.Push(ctx, rel.Layout, publish.DefaultRegistry, registryPrefix); err != nil {
		return fmt.Errorf("pushing the release: %w", err)
	}
	return nil
}

// pushed is where ref (a reference of the release, under ghcr.io/credo-dev)
// was pushed, as an oci:// URL without its tag.
func pushed(ref string) string {
	repo, _, _ := strings.Cut(strings.TrimPrefix(ref, publish.DefaultRegistry), ":")
	return "oci://" + registryPrefix + repo
}

// publicKey is the release's public key, as cosign.pub publishes it.
func publicKey(g Gomega) []byte {
	pub, err := os.ReadFile(filepath.Join(relOptions.Out, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	return pub
}

// hostBinaries is the release's directory of binaries for this machine,
// which the stand-in runs: the binaries the image carries.
func hostBinaries() string {
	return filepath.Join(relOptions.Out, "bin", runtime.GOOS+"_"+runtime.GOARCH)
}

// repoPath is a path inside the repository.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{controlplane.RepoRoot()}, elem...)...)
}
