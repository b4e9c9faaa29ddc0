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

	appsv1 "k8s.io/api/apps/v1"

	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/fluxinstall"
)

// runDeployment runs d's binary of the release built for the tests as a
// process, standing in for kubelet and the deployment controller
// (fluxinstall.RunDeployment says what it rewrites and why).
func runDeployment(ctx context.Context, d *appsv1.Deployment, eventsURL string, extra ...string) (*controlplane.Process, error) {
	return fluxinstall.RunDeployment(ctx, env, hostBinaries(), d, eventsURL, extra...)
}
