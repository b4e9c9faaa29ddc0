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

package projection

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/credo-dev/credo/tests/testpki"
)

const (
	testFieldOwner = "credo-projection-test"
	testLabel      = "internal.cozystack.io/tenant-ca"
)

// caCert is the certificate of a new self-signed CA named cn, PEM.
func caCert(t *testing.T, cn string) []byte {
	t.Helper()
	cert, _ := testpki.CA(t, cn)
	return cert
}

// newRelease is a HelmRelease as Write reads it: a name and a UID.
func newRelease(name string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(utilrand.String(12))}}
}

// requests counts the HTTP requests for Secrets a client sends, by method,
// as the API server receives them: a dry-run would be counted too.
type requests struct {
	mu     sync.Mutex
	counts map[string]int
}

// wrap is a rest.Config WrapTransport that counts into r.
func (r *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if strings.Contains(req.URL.Path, "/secrets") {
			method := req.Method
			if req.URL.Query().Has("dryRun") {
				method += "+dryRun"
			}
			r.mu.Lock()
			r.counts[method]++
			r.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// take returns the counts since the last take, and resets them.
func (r *requests) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts
	r.counts = map[string]int{}
	return c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
