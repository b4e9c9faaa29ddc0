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
	"strings"
)

// CertManagerController is the binary hack/build-cert-manager.sh builds:
// cert-manager's controllers as released, in one process.
const CertManagerController = "cert-manager-controller"

// CertManagerAssetsDir returns the directory holding cert-manager's
// controller and its CRDs (crds/): $CREDO_CERT_MANAGER_ASSETS when set, else
// the cache hack/build-cert-manager.sh builds into. It fails, naming the
// command to run, when either is missing.
func CertManagerAssetsDir() (string, error) {
	dir := os.Getenv("CREDO_CERT_MANAGER_ASSETS")
	if dir == "" {
		cache, err := cacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "credo", "cert-manager")
	}
	for _, p := range []string{CertManagerController, "crds"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return "", fmt.Errorf("cert-manager's %s not found in %s (run `make cert-manager`): %w", p, dir, err)
		}
	}
	return dir, nil
}

// StartCertManager runs cert-manager's controllers as a process against the
// environment, as the administrator (KUBECONFIG), watching every namespace,
// with the controllers named (cert-manager's defaults among those built
// when none). The CRDs must be installed (CertManagerAssetsDir()/crds among
// Options.CRDPaths). cert-manager has no readiness endpoint here: wait for
// an Issuer it makes Ready.
func (e *Environment) StartCertManager(controllers ...string) (*Process, error) {
	dir, err := CertManagerAssetsDir()
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig=" + e.Kubeconfig, "--cluster-resource-namespace=cert-manager", "-v=2"}
	if len(controllers) > 0 {
		args = append(args, "--controllers="+strings.Join(controllers, ","))
	}
	return e.StartProcess(CertManagerController, filepath.Join(dir, CertManagerController), nil, args...)
}
