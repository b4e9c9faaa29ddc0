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

package controlplane

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// KubernetesVersion is the version of the from-source control plane.
const KubernetesVersion = "v1.37.2"

// binaries the harness needs in the assets directory.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// AssetsDir returns the directory holding the control plane binaries:
// $KUBEBUILDER_ASSETS when set, else the cache hack/build-control-plane.sh
// builds into. It fails, naming the command to run, when a binary is missing.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		cache, err := cacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "credo", "k8s", KubernetesVersion)
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("control plane binary %s not found in %s (run `make control-plane`): %w", b, dir, err)
		}
	}
	return dir, nil
}

// cacheDir is $XDG_CACHE_HOME, else ~/.cache: where hack/ builds into.
func cacheDir() (string, error) {
	if cache := os.Getenv("XDG_CACHE_HOME"); cache != "" {
		return cache, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the build cache: %w", err)
	}
	return filepath.Join(home, ".cache"), nil
}

// RepoRoot returns the root of the credo repository: the nearest directory
// at or above the working directory (a test's package directory, or the
// root for the binaries make runs) whose go.mod declares credo's module.
// It is found from the working directory, not from this file's compiled
// path, because the Makefile builds with -trimpath.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(fmt.Sprintf("controlplane: working directory: %v", err))
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modfile.ModulePath(b) == credoModule {
			return d
		}
		if filepath.Dir(d) == d {
			panic(fmt.Sprintf("controlplane: no go.mod of %s at or above %s", credoModule, dir))
		}
	}
}

const credoModule = "github.com/credo-dev/credo"

// CRDPaths are the CustomResourceDefinitions every environment installs:
// credo's own, and the Flux and database-operator (CloudNativePG,
// mariadb-operator, trimmed) kinds credo references.
func CRDPaths() []string {
	root := RepoRoot()
	return []string{
		filepath.Join(root, "config", "crd", "bases"),
		filepath.Join(root, "config", "testdata", "crds"),
	}
}
