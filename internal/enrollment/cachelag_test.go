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

package enrollment_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// laggingCluster is the suite's manager whose cache has not seen any
// EnrollmentPolicy yet, as right after a policy and its token are created.
type laggingCluster struct{ enrollment.Cluster }

func (c laggingCluster) GetCache() cache.Cache { return laggingCache{c.Cluster.GetCache()} }

type laggingCache struct{ cache.Cache }

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*enrollv1.EnrollmentPolicy); ok {
		return apierrors.NewNotFound(enrollv1.GroupVersion.WithResource("enrollmentpolicies").GroupResource(), key.Name)
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

// A token minted right after its policy enrolls even while the cache has
// not caught up with the policy: the server confirms with the API server
// before it answers PolicyRevoked. A policy that is really gone is still
// refused.
func TestAPolicyNotYetCachedStillEnrolls(t *testing.T) {
	base := startServer(t, withCluster(func(c enrollment.Cluster) enrollment.Cluster { return laggingCluster{c} }))
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	if w.cert == nil {
		t.Fatal("no certificate")
	}

	other, _ := newToken(t, p, time.Hour)
	if err := k8s.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	status, e := post(t, httpClient(nil), base+enrollapi.PathWorkloads, enrollapi.EnrollRequest{Token: other}, nil)
	expectRefused(t, "a deleted policy", status, e, http.StatusForbidden, enrollapi.ReasonPolicyRevoked)
}
