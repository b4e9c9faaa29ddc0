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

package enrollment

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/shard"
)

// servesWorkload reports whether the request's Workload is this shard's: a
// Workload follows its EnrollmentPolicy, and its own labels only when the
// policy does not exist.
func servesWorkload(c client.Reader, s shard.Shard) func(context.Context, ctrl.Request) (bool, error) {
	return func(ctx context.Context, req ctrl.Request) (bool, error) {
		var wl enrollv1.Workload
		if err := c.Get(ctx, req.NamespacedName, &wl); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var p enrollv1.EnrollmentPolicy
		err := c.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: wl.Spec.Policy}, &p)
		switch {
		case err == nil:
			return s.Serves(&p), nil
		case apierrors.IsNotFound(err):
			return s.Serves(&wl), nil
		default:
			return false, err
		}
	}
}
