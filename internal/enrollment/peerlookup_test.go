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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	enrollv1 "github.com/credo-dev/credo/api/enrollment/v1alpha1"
	"github.com/credo-dev/credo/internal/enrollment"

	"github.com/credo-dev/credo/internal/lookupauthz"
	"github.com/credo-dev/credo/pkg/enrollapi"
	"github.com/credo-dev/credo/pkg/lookup"
	"github.com/credo-dev/credo/tests/controlplane"
	"github.com/credo-dev/credo/tests/testenv"
	"github.com/credo-dev/credo/tests/testpki"
)

var lookupRoleOnce sync.Once

// lookupRole creates the ClusterRole credo-workload-lookup as config/rbac
// ships it.
func lookupRole(t testing.TB) {
	t.Helper()
	lookupRoleOnce.Do(func() {
		objs, err := testenv.Kustomize(filepath.Join(controlplane.RepoRoot(), "config/rbac"))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" && o.GetName() == "credo-workload-lookup" {
				if err := k8s.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatal("config/rbac ships no ClusterRole credo-workload-lookup")
	})
}

// bindLookup binds credo-workload-lookup in ns to subject and returns the
// binding.
func bindLookup(t testing.TB, ns string, subject rbacv1.Subject) *rbacv1.RoleBinding {
	t.Helper()
	lookupRole(t)
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "look-up-", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "credo-workload-lookup"},
		Subjects:   []rbacv1.Subject{subject},
	}
	if err := k8s.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	waitForRBAC(t, ns, subject, true)
	return rb
}

// unbindLookup deletes rb, a binding of bindLookup.
func unbindLookup(t testing.TB, rb *rbacv1.RoleBinding) {
	t.Helper()
	if err := k8s.Delete(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	waitForRBAC(t, rb.Namespace, rb.Subjects[0], false)
}

// waitForRBAC waits until kube-apiserver's RBAC authorizer, which sees
// bindings through its own informer, answers allowed for subject's lookups
// in ns: before a lookup's decision is held.
func waitForRBAC(t testing.TB, ns string, subject rbacv1.Subject, allowed bool) {
	t.Helper()
	attrs := authzv1.ResourceAttributes{Namespace: ns, Verb: enrollapi.VerbLookup, Group: enrollv1.GroupVersion.Group, Resource: "workloads", Name: "any"}
	user, groups := "probe", []string{subject.Name}
	if subject.Kind != rbacv1.GroupKind {
		user, groups = controlplane.ServiceAccountUser(subject.Namespace, subject.Name)
	}
	waitFor(t, func() bool {
		ok, err := env.Allowed(context.Background(), user, groups, attrs)
		return err == nil && ok == allowed
	})
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}
}

// lookupClient is pkg/lookup's client of base presenting cert, on the
// servers' clock.
func lookupClient(t testing.TB, base string, cert func() (*tls.Certificate, error), token func() (string, error)) *lookup.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(testCA.ca.CertPEM())
	c, err := lookup.New(lookup.Options{Endpoint: base, Roots: roots, ClientCertificate: cert, Token: token, Now: serverNow})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func presenting(c *tls.Certificate) func() (*tls.Certificate, error) {
	return func() (*tls.Certificate, error) { return c, nil }
}

// refusal returns the message of the lookup's refusal, failing the test on
// anything else.
func refusal(t testing.TB, what string, err error, reason string) string {
	t.Helper()
	var e *enrollapi.Error
	if !errors.As(err, &e) || e.Reason != reason {
		t.Fatalf("%s: got %v, want a %s refusal", what, err, reason)
	}
	return e.Message
}

func advance(d time.Duration) { clockOffset.Add(int64(d)) }

// A relying service may look a peer up only when RBAC allows its
// workload the verb lookup on the peer's Workload: a binding in the peer's
// namespace to the group of the caller's policy. A peer it may not look up
// and one that does not exist are refused alike; the answer is what the
// registry holds now; a binding removed stops authorizing once the decision
// held expires.
func TestLookupNeedsTheVerbLookupOnThePeer(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	ctx := context.Background()
	base := startServer(t)
	ns := env.NewNamespace(t)
	tokA, _ := newToken(t, newNamedPolicy(t, ns, "relying", policySpec(time.Hour, time.Hour)), time.Hour)
	tokB, _ := newToken(t, newNamedPolicy(t, ns, "frontends", policySpec(time.Hour, time.Hour)), time.Hour)
	tokC, _ := newToken(t, newNamedPolicy(t, ns, "others", policySpec(time.Hour, time.Hour)), time.Hour)
	a, b, c := enroll(t, base, tokA, nil), enroll(t, base, tokB, map[string]string{"role": "web"}), enroll(t, base, tokC, nil)
	asA := lookupClient(t, base, presenting(a.tlsCert()), nil)

	_, err := asA.Peer(ctx, b.cert)
	forbidden := refusal(t, "a lookup with no binding", err, enrollapi.ReasonLookupForbidden)
	nobody := uuid.NewString()
	_, err = asA.Lookup(ctx, enrollapi.WorkloadURI(nobody).String(), "")
	unknown := refusal(t, "a lookup of a workload that does not exist", err, enrollapi.ReasonLookupForbidden)
	if strings.ReplaceAll(forbidden, b.uuid, "X") != strings.ReplaceAll(unknown, nobody, "X") {
		t.Fatalf("a forbidden peer (%q) and an unknown one (%q) are told apart", forbidden, unknown)
	}

	rb := bindLookup(t, ns, group("credo:policy:"+ns+":relying"))
	advance(lookupauthz.DefaultDeniedTTL + time.Second)
	p, err := asA.Peer(ctx, b.cert)
	if err != nil {
		t.Fatalf("a lookup the binding allows: %v", err)
	}
	if p.UUID != b.uuid || p.Namespace != ns || p.Policy != "frontends" || !maps.Equal(p.Labels, map[string]string{"role": "web"}) ||
		p.Hostname != "vm-1.example.org" || !p.Current || p.Replaced || p.Denied || !p.Trusted() || p.URI != b.uri.String() {
		t.Fatalf("the answer: %+v", p)
	}
	if age := p.Expires.Sub(serverNow()); age <= 25*time.Second || age > enrollment.DefaultLookupMaxAge {
		t.Fatalf("the answer may be used for %s, want the default max age %s", age, enrollment.DefaultLookupMaxAge)
	}
	_, err = lookupClient(t, base, presenting(c.tlsCert()), nil).Peer(ctx, b.cert)
	refusal(t, "a lookup by a workload of a policy the binding does not name", err, enrollapi.ReasonLookupForbidden)

	unbindLookup(t, rb)
	if p, err := asA.Peer(ctx, b.cert); err != nil || p.UUID != b.uuid {
		t.Fatalf("an answer held within its max age: %v", err)
	}
	advance(lookupauthz.DefaultAllowedTTL + time.Second)
	_, err = asA.Peer(ctx, b.cert)
	refusal(t, "a lookup once the binding was removed and the decision held expired", err, enrollapi.ReasonLookupForbidden)
}

// Only a workload's current certificate, valid now and issued by the
// enrollment CA, looks up, and only while the workload is not denied. A
// connection made before the caller renewed is refused as not current, and
// pkg/lookup connects again with the current certificate.
func TestLookupCallerPresentsItsCurrentCertificate(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	ctx := context.Background()
	base := startServer(t)
	ns := env.NewNamespace(t)
	token, _ := newToken(t, newPolicy(t, ns, policySpec(time.Hour, time.Hour)), time.Hour)
	a, b := enroll(t, base, token, nil), enroll(t, base, token, map[string]string{"role": "db"})
	bindLookup(t, ns, group("credo:workloads:"+ns))

	var mu sync.Mutex
	current := a.tlsCert()
	asA := lookupClient(t, base, func() (*tls.Certificate, error) { mu.Lock(); defer mu.Unlock(); return current, nil }, nil)
	if _, err := asA.Peer(ctx, b.cert); err != nil {
		t.Fatalf("a lookup with the current certificate: %v", err)
	}
	old := a.tlsCert()
	status, e, resp := renew(t, base, a, old)
	if e != nil {
		t.Fatalf("renewal: %d %s", status, e)
	}
	renewed := &tls.Certificate{Certificate: [][]byte{parseCert(t, resp.Certificate).Raw}, PrivateKey: a.key}
	// The lookup judges the caller on the server's cache, which sees the
	// renewal (durable on the API server before it was answered) a moment
	// later: until then the certificate just replaced, the same
	// workload's, still looks up.
	var code int
	waitFor(t, func() bool {
		code, e = postLookup(t, base, old, enrollapi.LookupRequest{URI: b.uri.String()})
		return e != nil
	})
	expectRefused(t, "a lookup with the certificate the caller replaced", code, e, http.StatusUnauthorized, enrollapi.ReasonNotCurrent)
	mu.Lock()
	current = renewed
	mu.Unlock()
	// The client's connection still presents the replaced certificate; a
	// lookup not held (another serial) is refused on it, and asked again
	// on a new connection.
	if _, err := asA.Lookup(ctx, b.uri.String(), "1"); err != nil {
		t.Fatalf("a lookup after the caller renewed: %v", err)
	}

	code, e = postLookup(t, base, nil, enrollapi.LookupRequest{URI: b.uri.String()})
	expectRefused(t, "a lookup without a client certificate", code, e, http.StatusUnauthorized, enrollapi.ReasonUnauthenticated)
	forgedTLS := testpki.SelfSigned(t, testpki.URIs(a.uri)).TLS()
	code, e = postLookup(t, base, &forgedTLS, enrollapi.LookupRequest{URI: b.uri.String()})
	expectRefused(t, "a lookup with a certificate the enrollment CA did not issue", code, e, http.StatusUnauthorized, enrollapi.ReasonUnauthenticated)
	code, e = postLookup(t, base, renewed, enrollapi.LookupRequest{URI: "https://example.org/"})
	expectRefused(t, "a lookup of a URI that names no workload", code, e, http.StatusBadRequest, enrollapi.ReasonBadRequest)

	setDenied(t, ns, a.uuid, &enrollv1.WorkloadDenial{Reason: "host compromised", By: "alice"})
	// Lookups answer from the cache: a deny holds once it sees it.
	waitFor(t, func() bool { return getCached(t, ns, a.uuid).Spec.Denied != nil })
	code, e = postLookup(t, base, renewed, enrollapi.LookupRequest{URI: b.uri.String(), Serial: "2"})
	expectRefused(t, "a lookup by a denied workload", code, e, http.StatusForbidden, enrollapi.ReasonDenied)
	setDenied(t, ns, a.uuid, nil)

	advance(2 * time.Hour)
	code, e = postLookup(t, base, renewed, enrollapi.LookupRequest{URI: b.uri.String(), Serial: "3"})
	expectRefused(t, "a lookup with an expired certificate", code, e, http.StatusUnauthorized, enrollapi.ReasonUnauthenticated)
}

// getCached reads the Workload from the servers' cache.
func getCached(t testing.TB, ns, id string) *enrollv1.Workload {
	t.Helper()
	var wl enrollv1.Workload
	if err := reader.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: id}, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

func serialOf(c *x509.Certificate) string { return fmt.Sprintf("%x", c.SerialNumber) }

// postLookup sends a lookup presenting cert (none when nil).
func postLookup(t testing.TB, base string, cert *tls.Certificate, req enrollapi.LookupRequest) (int, *enrollapi.Error) {
	t.Helper()
	return post(t, httpClient(cert), base+enrollapi.PathLookup, req, &enrollapi.LookupResponse{})
}

// The answer says whether the certificate asked about is the peer's
// current one or the one it replaced, and a denied peer is answered
// denied, with no labels: a relying service refuses it.
func TestLookupAnswersTheCertificateAndTheDenialNow(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	ctx := context.Background()
	base := startServer(t)
	ns := env.NewNamespace(t)
	token, _ := newToken(t, newPolicy(t, ns, policySpec(time.Hour, time.Hour)), time.Hour)
	a, b := enroll(t, base, token, nil), enroll(t, base, token, map[string]string{"role": "web"})
	bindLookup(t, ns, group("credo:workloads:"+ns))
	asA := lookupClient(t, base, presenting(a.tlsCert()), nil)

	first := b.cert
	status, e, resp := renew(t, base, b, b.tlsCert())
	if e != nil {
		t.Fatalf("renewal: %d %s", status, e)
	}
	second := parseCert(t, resp.Certificate)
	waitFor(t, func() bool { return getCached(t, ns, b.uuid).Status.Serial == serialOf(second) })
	for _, tt := range []struct {
		name              string
		cert              *x509.Certificate
		current, replaced bool
	}{
		{"the current certificate", second, true, false},
		{"the certificate it replaced", first, false, true},
	} {
		p, err := asA.Peer(ctx, tt.cert)
		if err != nil || p.Current != tt.current || p.Replaced != tt.replaced || p.Trusted() != true {
			t.Fatalf("%s: %+v %v", tt.name, p, err)
		}
	}
	if p, err := asA.Lookup(ctx, b.uri.String(), "abc"); err != nil || p.Current || p.Replaced || p.Trusted() {
		t.Fatalf("a serial the workload never held: %+v %v", p, err)
	}

	setDenied(t, ns, b.uuid, &enrollv1.WorkloadDenial{Reason: "laptop stolen", By: "alice"})
	waitFor(t, func() bool { return getCached(t, ns, b.uuid).Spec.Denied != nil })
	advance(enrollment.DefaultLookupMaxAge + time.Second)
	p, err := asA.Peer(ctx, second)
	if err != nil || !p.Denied || p.Trusted() || len(p.Labels) != 0 || p.Hostname != "" {
		t.Fatalf("a denied peer: %+v %v", p, err)
	}
}

// A caller in the cluster presents a Kubernetes token issued for the
// audience credo-enrollment; kube-apiserver authenticates it (TokenReview)
// and RBAC authorizes its user. A token for another audience is refused.
func TestLookupByKubernetesToken(t *testing.T) {
	t.Cleanup(func() { clockOffset.Store(0) })
	ctx := context.Background()
	base := startServer(t)
	ns := env.NewNamespace(t)
	token, _ := newToken(t, newPolicy(t, ns, policySpec(time.Hour, time.Hour)), time.Hour)
	b := enroll(t, base, token, map[string]string{"role": "web"})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "checker", Namespace: ns}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tokenFor := func(audience string) func() (string, error) {
		tr := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}}}
		if err := k8s.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatal(err)
		}
		return func() (string, error) { return tr.Status.Token, nil }
	}
	asSA := lookupClient(t, base, nil, tokenFor(enrollapi.LookupAudience))
	_, err := asSA.Peer(ctx, b.cert)
	refusal(t, "a token whose user may not look up", err, enrollapi.ReasonLookupForbidden)
	bindLookup(t, ns, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "checker", Namespace: ns})
	advance(lookupauthz.DefaultDeniedTTL + time.Second)
	if p, err := asSA.Peer(ctx, b.cert); err != nil || !maps.Equal(p.Labels, map[string]string{"role": "web"}) {
		t.Fatalf("a token whose user may look up: %+v %v", p, err)
	}
	_, err = lookupClient(t, base, nil, tokenFor("https://kubernetes.default.svc")).Peer(ctx, b.cert)
	refusal(t, "a token for another audience", err, enrollapi.ReasonUnauthenticated)
	_, err = lookupClient(t, base, nil, func() (string, error) { return "not-a-token", nil }).Peer(ctx, b.cert)
	refusal(t, "a string that is no token", err, enrollapi.ReasonUnauthenticated)
}

// Reviews sent to kube-apiserver are budgeted, per caller and for all
// callers: beyond it a lookup is answered 429 LookupsLimited with
// Retry-After, while decisions already held are still answered.
func TestLookupReviewsAreBudgeted(t *testing.T) {
	ctx := context.Background()
	base := startServer(t, func(s *serverSetup) { s.opts.Lookups.ReviewsPerSecond, s.opts.Lookups.ReviewsBurst = 0.01, 1 })
	ns := env.NewNamespace(t)
	token, _ := newToken(t, newPolicy(t, ns, policySpec(time.Hour, time.Hour)), time.Hour)
	a, b, c := enroll(t, base, token, nil), enroll(t, base, token, nil), enroll(t, base, token, nil)
	bindLookup(t, ns, group("credo:workloads:"+ns))
	if _, err := lookupClient(t, base, presenting(a.tlsCert()), nil).Peer(ctx, b.cert); err != nil {
		t.Fatalf("the first review: %v", err)
	}
	code, e := postLookup(t, base, a.tlsCert(), enrollapi.LookupRequest{URI: c.uri.String()})
	expectRefused(t, "a review over the budget", code, e, http.StatusTooManyRequests, enrollapi.ReasonLookupsLimited)
	if code, e := postLookup(t, base, a.tlsCert(), enrollapi.LookupRequest{URI: b.uri.String()}); e != nil {
		t.Fatalf("a decision held, over the budget: %d %s", code, e)
	}
}
