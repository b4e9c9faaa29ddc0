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

// Package upgrade upgrades credo as its users do: from the previous
// release (the last of hack/release/releases.txt, built from its own
// commit by its own release builder) to a release of the working tree, both
// pushed to a registry on loopback and installed by the real source- and
// kustomize-controller from config/samples/flux/oci, the upgrade being the
// OCIRepository's tag changed. Tenants' state is made on the previous
// release, load runs through the rollout, and agents of each version renew
// against servers of the other.
package upgrade

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
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credo-dev/credo/internal/publish"
	"github.com/credo-dev/credo/internal/publish/signing"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
)

// currentTag is the version of the working tree's release.
const currentTag = "v0.0.0-e2e"

var (
	env *controlplane.Environment
	// prev is the release the upgrade starts from, cur the working tree's.
	prev *previous
	cur  *publish.Result
	// curDir is cur's output directory.
	curDir string
	// registryPrefix is where both releases are pushed: the loopback
	// registry's host and credo-dev ("127.0.0.1:41234/credo-dev").
	registryPrefix string
)

func TestMain(m *testing.M) {
	// No kube-controller-manager: nothing here needs garbage collection.
	// Only Flux's CRDs: credo's come from the releases. Aggregation: mints
	// and join tokens go through the access API's APIService.
	os.Exit(testenv.Main(m, testenv.Options{
		ControlPlane: controlplane.Options{
			NoControllerManager: true, Aggregation: true,
			CRDPaths: []string{filepath.Join(controlplane.RepoRoot(), "config", "testdata", "crds")},
		},
		NoManager: true,
	}, func(ctx context.Context, e *testenv.Env) error {
		env = e.Environment
		// The CRDs are read whole: their UIDs and the schema served.
		if err := apiextensionsv1.AddToScheme(env.Scheme); err != nil {
			return err
		}
		for _, ns := range []string{"flux-system", "credo-system"} {
			if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				return fmt.Errorf("creating namespace %s: %w", ns, err)
			}
		}
		return buildAndPush(ctx)
	}))
}

// buildAndPush builds the previous release (cached) and the working tree's,
// both signed with the tests' one key, and pushes both to a registry on
// loopback.
func buildAndPush(ctx context.Context) error {
	dir, err := cacheDir()
	if err != nil {
		return err
	}
	keyFile, err := signingKey(dir)
	if err != nil {
		return err
	}
	if prev, err = buildPrevious(ctx, controlplane.RepoRoot(), dir, keyFile, func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, f+"\n", a...)
	}); err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	signer, err := signing.NewSigner(key, nil)
	if err != nil {
		return err
	}
	curDir = filepath.Join(env.Dir, "release")
	if cur, err = publish.Release(ctx, publish.Options{
		Root: controlplane.RepoRoot(), Version: currentTag, Out: curDir, Signer: signer, AllowDirty: true,
		Platforms: []string{"linux/" + runtime.GOARCH},
	}); err != nil {
		return fmt.Errorf("building the working tree's release: %w", err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	registryPrefix = srv.Listener.Addr().String() + "/credo-dev"
	for _, layout := range []string{filepath.Join(prev.Dir, "oci"), filepath.Join(curDir, "oci")} {
		if _, err := publish.Push(ctx, layout, publish.DefaultRegistry, registryPrefix); err != nil {
			return fmt.Errorf("pushing %s: %w", layout, err)
		}
	}
	return nil
}

// manifestsRepo is where the manifests artifacts were pushed, as an
// oci:// URL without a tag: the same repository for both releases, as on
// ghcr.io.
func manifestsRepo() string {
	repo, _, _ := strings.Cut(strings.TrimPrefix(cur.Manifests.Ref, publish.DefaultRegistry), ":")
	return "oci://" + registryPrefix + repo
}

// curBinaries is the working tree's release's directory of binaries for
// this machine.
func curBinaries() string {
	return filepath.Join(curDir, "bin", runtime.GOOS+"_"+runtime.GOARCH)
}
