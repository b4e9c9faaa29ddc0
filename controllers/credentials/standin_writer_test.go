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
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/credo-dev/credo/tests/platform"
)

// startValuesFromWriter starts the stand-in of the platform's writers of
// hr's spec.valuesFrom (tests/platform) with list, until the test ends.
func startValuesFromWriter(t *testing.T, hr *helmv2.HelmRelease, list []helmv2.ValuesReference) *platform.ValuesFromWriter {
	t.Helper()
	w, err := platform.StartValuesFromWriter(env.Config, env.Scheme, client.ObjectKeyFromObject(hr), list)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}
