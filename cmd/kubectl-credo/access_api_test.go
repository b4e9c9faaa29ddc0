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

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
)

// request is one call the fake API server received.
type request struct {
	method, path string
	body         map[string]any
}

// fakeAccessAPI serves discovery of access.credo.dev and answers the
// account subresources and the account view; it records every call.
type fakeAccessAPI struct {
	mu       sync.Mutex
	requests []request
	// warning, when set, is sent as a Warning header with every mint and
	// revocation, as the access API does for a suspended HelmRelease.
	warning string
}

const group = "/apis/access.credo.dev/v1alpha1"

func (f *fakeAccessAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if raw, _ := io.ReadAll(r.Body); len(raw) > 0 {
		_ = json.Unmarshal(raw, &body)
	}
	f.mu.Lock()
	f.requests = append(f.requests, request{method: r.Method, path: r.URL.Path, body: body})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	reply := func(code int, v any) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.URL.Path == "/api":
		reply(200, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		gv := metav1.GroupVersionForDiscovery{GroupVersion: "access.credo.dev/v1alpha1", Version: "v1alpha1"}
		reply(200, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups: []metav1.APIGroup{{Name: "access.credo.dev", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}})
	case r.URL.Path == group:
		reply(200, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "access.credo.dev/v1alpha1",
			APIResources: []metav1.APIResource{
				{Name: "accounts", SingularName: "account", Namespaced: true, Kind: "Account", Verbs: []string{"get", "list"}},
				{Name: "accounts/mint", Namespaced: true, Kind: "Mint", Verbs: []string{"create"}},
				{Name: "accounts/revocation", Namespaced: true, Kind: "Revocation", Verbs: []string{"create"}},
				{Name: "mints", SingularName: "mint", Namespaced: true, Kind: "Mint", Verbs: []string{"create"}},
				{Name: "revocations", SingularName: "revocation", Namespaced: true, Kind: "Revocation", Verbs: []string{"create"}},
			}})
	case r.Method == http.MethodPost && r.URL.Path == group+"/namespaces/tenant-a/accounts/db/mint":
		if f.warning != "" {
			w.Header().Add("Warning", `299 - "`+f.warning+`"`)
		}
		reply(201, accessv1.Mint{TypeMeta: metav1.TypeMeta{Kind: "Mint", APIVersion: "access.credo.dev/v1alpha1"},
			Status: accessv1.MintStatus{Username: "app", Password: "not-a-real-password", SecretName: "pg.app.account", ResourceVersion: "43", MintedAt: at}})
	case r.Method == http.MethodPost && r.URL.Path == group+"/namespaces/tenant-a/accounts/db/revocation":
		if f.warning != "" {
			w.Header().Add("Warning", `299 - "`+f.warning+`"`)
		}
		reply(201, accessv1.Revocation{TypeMeta: metav1.TypeMeta{Kind: "Revocation", APIVersion: "access.credo.dev/v1alpha1"},
			Status: accessv1.RevocationStatus{SecretName: "pg.app.account", ResourceVersion: "44", RevokedAt: at}})
	case r.Method == http.MethodGet && r.URL.Path == group+"/namespaces/tenant-a/accounts":
		reply(200, accessv1.AccountList{TypeMeta: metav1.TypeMeta{Kind: "AccountList", APIVersion: "access.credo.dev/v1alpha1"},
			Items: []accessv1.Account{dbAccount(at)}})
	case r.Method == http.MethodGet && r.URL.Path == group+"/namespaces/tenant-a/accounts/db":
		a := dbAccount(at)
		a.TypeMeta = metav1.TypeMeta{Kind: "Account", APIVersion: "access.credo.dev/v1alpha1"}
		reply(200, a)
	default:
		reply(404, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: 404, Reason: metav1.StatusReasonNotFound})
	}
}

// dbAccount is the one account the fake serves, last revoked by jane at at.
func dbAccount(at metav1.Time) accessv1.Account {
	return accessv1.Account{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "tenant-a"},
		Spec:       accessv1.AccountSpec{Release: "pg", Username: "app", Owner: "tenant", Format: "scram-sha-256", FormatKind: "BuiltIn"},
		Status: accessv1.AccountStatus{SecretName: "pg.app.account", SecretResourceVersion: "44", Origin: "Revoked", LastChange: &at,
			History: []accessv1.AccountOperation{{Operation: "Revoked", At: at, By: "jane"}}},
	}
}

// gets counts the GETs of path the server received.
func (f *fakeAccessAPI) gets(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.method == http.MethodGet && r.path == path {
			n++
		}
	}
	return n
}

// posts returns the POSTs the server received.
func (f *fakeAccessAPI) posts() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []request
	for _, r := range f.requests {
		if r.method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

func fakeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {server: " + server + "}\n" +
		"users:\n- name: jane\n  user: {token: fake}\ncontexts:\n- name: fake\n  context: {cluster: fake, user: jane, namespace: tenant-a}\ncurrent-context: fake\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mint and revoke POST to accounts/<account>/mint and /revocation, the form
// whose audit event names the account.
func TestMintAndRevokeUseTheAccountSubresources(t *testing.T) {
	g := NewWithT(t)
	api := &fakeAccessAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kubeconfig := fakeKubeconfig(t, srv.URL)

	var out bytes.Buffer
	g.Expect(run([]string{"mint", "db", "--kubeconfig", kubeconfig, "-o", "json", "--resource-version", "42"}, strings.NewReader(""), &out)).To(Succeed())
	var status accessv1.MintStatus
	g.Expect(json.Unmarshal(out.Bytes(), &status)).To(Succeed())
	g.Expect(status.Username).To(Equal("app"))
	g.Expect(status.Password).To(Equal("not-a-real-password"))

	out.Reset()
	g.Expect(run([]string{"revoke", "db", "--kubeconfig", kubeconfig}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring("revoked db: Secret pg.app.account is at resourceVersion 44"))

	posts := api.posts()
	g.Expect(posts).To(HaveLen(2))
	g.Expect(posts[0].path).To(Equal(group + "/namespaces/tenant-a/accounts/db/mint"))
	g.Expect(posts[0].body).To(HaveKeyWithValue("kind", "Mint"))
	g.Expect(posts[0].body).To(HaveKeyWithValue("spec", HaveKeyWithValue("resourceVersion", "42")))
	g.Expect(posts[1].path).To(Equal(group + "/namespaces/tenant-a/accounts/db/revocation"))
	g.Expect(posts[1].body).To(HaveKeyWithValue("kind", "Revocation"))
	// Without --resource-version, the version the account view shows.
	g.Expect(posts[1].body).To(HaveKeyWithValue("spec", HaveKeyWithValue("resourceVersion", "44")))
	g.Expect(api.gets(group+"/namespaces/tenant-a/accounts/db")).To(Equal(1), "only the revocation read the account view")
}

// --force sends no expected version and reads nothing first; it excludes
// --resource-version.
func TestForceSendsNoExpectedVersion(t *testing.T) {
	g := NewWithT(t)
	api := &fakeAccessAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kubeconfig := fakeKubeconfig(t, srv.URL)

	var out bytes.Buffer
	g.Expect(run([]string{"mint", "db", "--kubeconfig", kubeconfig, "-o", "json", "--force"}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(run([]string{"revoke", "db", "--kubeconfig", kubeconfig, "--force"}, strings.NewReader(""), &out)).To(Succeed())
	posts := api.posts()
	g.Expect(posts).To(HaveLen(2))
	for _, p := range posts {
		g.Expect(p.body).To(HaveKeyWithValue("spec", Not(HaveKey("resourceVersion"))), p.path)
	}
	g.Expect(api.gets(group + "/namespaces/tenant-a/accounts/db")).To(BeZero())

	err := run([]string{"mint", "db", "--kubeconfig", kubeconfig, "-o", "json", "--force", "--resource-version", "42"}, strings.NewReader(""), &out)
	g.Expect(err).To(MatchError(ContainSubstring("--force and --resource-version exclude each other")))
	g.Expect(api.posts()).To(HaveLen(2))
}

// get <account> shows the account view: origin, the Secret's version, the
// last operation.
func TestGetShowsOneAccountFromTheAccountView(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(&fakeAccessAPI{})
	defer srv.Close()
	var out bytes.Buffer
	g.Expect(run([]string{"get", "db", "--kubeconfig", fakeKubeconfig(t, srv.URL)}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(MatchRegexp(`^NAME\s+RELEASE\s+USERNAME\s+OWNER\s+ORIGIN\s+SECRET VERSION\s+LAST OPERATION
db\s+pg\s+app\s+tenant\s+Revoked\s+44\s+Revoked by jane at 2026-01-02T03:04:05Z
$`))
}

// get without an account summarises the namespace; on a cluster that
// serves the access API alone, the other sections say so and the command
// succeeds.
func TestGetSummarisesWhatTheClusterServes(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(&fakeAccessAPI{})
	defer srv.Close()
	var out bytes.Buffer
	g.Expect(run([]string{"get", "--kubeconfig", fakeKubeconfig(t, srv.URL)}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring("Trust anchors in tenant-a: not shown: this cluster does not serve trustanchors.trust.credo.dev\n"))
	g.Expect(out.String()).To(MatchRegexp(`(?m)^Accounts in tenant-a:\nNAME\s+RELEASE\s+USERNAME\s+OWNER\s+ORIGIN\s+LAST CHANGE\s+BY\s+APPLIED\s+SUSPENDED\s+READY\s+STATUS\ndb\s+pg\s+app\s+tenant\s+Revoked\s+\S+ ago\s+jane\s+-\s+False\s+-\s+-$`))
	g.Expect(out.String()).To(ContainSubstring("Workloads in tenant-a: not shown: this cluster does not serve workloads.enrollment.credo.dev\n"))
}

// The server's warning (a mint for a suspended HelmRelease) is printed on
// stderr, as kubectl prints it, and closes the human output; -o json stays
// parseable.
func TestMintAndRevokePrintTheServersWarning(t *testing.T) {
	const suspended = "HelmRelease tenant-a/pg is suspended (ReleaseSuspended): the new password reaches the engine only when it is resumed"
	g := NewWithT(t)
	srv := httptest.NewServer(&fakeAccessAPI{warning: suspended})
	defer srv.Close()
	kubeconfig := fakeKubeconfig(t, srv.URL)
	var errOut bytes.Buffer
	stderr = &errOut
	terminal := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { stderr, isTerminal = os.Stderr, terminal }()

	var out bytes.Buffer
	g.Expect(run([]string{"mint", "db", "--kubeconfig", kubeconfig, "--force"}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(HaveSuffix("The password is shown once; credo keeps only its verifier.\n\nWarning: " + suspended + "\n"))
	g.Expect(errOut.String()).To(Equal("Warning: " + suspended + "\n"))

	out.Reset()
	errOut.Reset()
	g.Expect(run([]string{"mint", "db", "--kubeconfig", kubeconfig, "--force", "-o", "json"}, strings.NewReader(""), &out)).To(Succeed())
	var status accessv1.MintStatus
	g.Expect(json.Unmarshal(out.Bytes(), &status)).To(Succeed(), "the JSON output holds no warning")
	g.Expect(errOut.String()).To(Equal("Warning: " + suspended + "\n"))

	out.Reset()
	errOut.Reset()
	g.Expect(run([]string{"revoke", "db", "--kubeconfig", kubeconfig, "--force"}, strings.NewReader(""), &out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring("nobody can log in until the next mint\n\nWarning: " + suspended + "\n"))
	g.Expect(errOut.String()).To(Equal("Warning: " + suspended + "\n"))
}
