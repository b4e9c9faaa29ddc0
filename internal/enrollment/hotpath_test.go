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
	"fmt"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"
	"github.com/credo-dev/credo/pkg/enrollapi"
)

// staleCluster is the suite's manager whose cache holds, for the Workloads
// a test froze, the version it froze: a cache that lags behind renewals.
type staleCluster struct {
	enrollment.Cluster
	frozen *frozenWorkloads
}

type frozenWorkloads struct {
	mu sync.Mutex
	m  map[string]enrollv1.Workload
}

func (f *frozenWorkloads) freeze(wl *enrollv1.Workload) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[wl.Name] = *wl.DeepCopy()
}

func (f *frozenWorkloads) get(name string) (enrollv1.Workload, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	wl, ok := f.m[name]
	return *wl.DeepCopy(), ok
}

func (c staleCluster) GetCache() cache.Cache {
	return staleCache{Cache: c.Cluster.GetCache(), frozen: c.frozen}
}

type staleCache struct {
	cache.Cache
	frozen *frozenWorkloads
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if wl, ok := obj.(*enrollv1.Workload); ok {
		if old, ok := c.frozen.get(key.Name); ok {
			*wl = old
			return nil
		}
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c staleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	if wls, ok := list.(*enrollv1.WorkloadList); ok {
		for i := range wls.Items {
			if old, ok := c.frozen.get(wls.Items[i].Name); ok {
				wls.Items[i] = old
			}
		}
	}
	return nil
}

// Renewals read the Workload from the cache and write conditionally on
// its version: with a cache that still holds the version before the last
// renewal, the older certificate is still refused (its write conflicts and
// the API server's version names the newer one), and the current one still
// renews (a refusal of the cached version is confirmed uncached).
func TestOnlyTheCurrentCertificateRenewsWhileTheCacheLags(t *testing.T) {
	frozen := &frozenWorkloads{m: map[string]enrollv1.Workload{}}
	base := startServer(t, withCluster(func(c enrollment.Cluster) enrollment.Cluster { return staleCluster{c, frozen} }))
	ns := env.NewNamespace(t)
	// Record keeps v1's rule, the latest renewal supersedes: the older
	// certificate's holder alone is refused (duplicate_test.go has the rest).
	p := newPolicy(t, ns, recordDuplicates(policySpec(time.Hour, time.Hour)))
	token, _ := newToken(t, p, time.Hour)
	w := enroll(t, base, token, nil)
	old := w.tlsCert()
	frozen.freeze(getWorkload(t, ns, w.uuid))

	status, e, resp := renew(t, base, w, old)
	if e != nil {
		t.Fatalf("renewal with the current certificate: %d %s", status, e)
	}
	next := parseCert(t, resp.Certificate)

	status, e, _ = renew(t, base, w, old)
	expectRefused(t, "renewal with the older certificate, the cache naming it", status, e, 403, enrollapi.ReasonNotCurrent)
	if wl := getWorkload(t, ns, w.uuid); wl.Status.Serial != fmt.Sprintf("%x", next.SerialNumber) {
		t.Fatal("a renewal with the older certificate replaced the current one")
	}

	w.cert = next
	if status, e, _ := renew(t, base, w, w.tlsCert()); e != nil {
		t.Fatalf("renewal with the current certificate, the cache naming the older one: %d %s", status, e)
	}
}

// Join token uses are counted in memory and written every TokenUseFlush,
// and once more when the listener stops: none is lost at shutdown.
func TestTokenUsesAreWrittenWhenTheServerStops(t *testing.T) {
	ns := env.NewNamespace(t)
	p := newPolicy(t, ns, policySpec(time.Hour, time.Hour))
	token, jt := newToken(t, p, time.Hour)
	var uuid string
	t.Run("serve", func(t *testing.T) {
		base := startServer(t, withUseFlush(time.Hour))
		enroll(t, base, token, nil)
		uuid = enroll(t, base, token, nil).uuid
		if got := getToken(t, jt); got.Status.Uses != 0 {
			t.Fatalf("uses %d written before the first flush", got.Status.Uses)
		}
	})
	if got := getToken(t, jt); got.Status.Uses != 2 || got.Status.LastWorkload != uuid {
		t.Fatalf("uses %d, last workload %q after the server stopped; want 2 and the last one", got.Status.Uses, got.Status.LastWorkload)
	}
}
