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
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credo-dev/credo/tests/fluxinstall"
)

// The test overlays of config/samples/flux, shared with tests/upgrade.
type (
	target    = fluxinstall.Target
	patch     = fluxinstall.Patch
	accessAPI = fluxinstall.AccessAPI
)

var (
	ops = fluxinstall.Ops
	op  = fluxinstall.Op
)

// renderSample builds config/samples/flux/<sample> through a test overlay
// of patches. The shipped sample is not changed.
func renderSample(t *testing.T, g Gomega, sample string, patches []patch) []*unstructured.Unstructured {
	return fluxinstall.RenderSample(g, t.TempDir(), repoPath("config", "samples", "flux", sample), patches)
}
