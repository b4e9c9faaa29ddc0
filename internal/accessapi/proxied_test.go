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

package accessapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
)

// A mint sent straight to the access API's port, around kube-apiserver,
// would leave no audit event: the server refuses every request
// kube-apiserver did not proxy (401, saying to go through kube-apiserver)
// and writes nothing; the same mint through kube-apiserver works and is
// audited. The health endpoints stay open.
func TestOnlyRequestsProxiedByKubeAPIServerAreServed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	shippedRoles(t)

	// A pipeline's ServiceAccount and a user, each allowed to mint in ns
	// through kube-apiserver.
	token := mintingServiceAccount(t, ns, "pipeline")
	viaAPIServer, err := client.New(&rest.Config{
		Host: env.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}, BearerToken: token,
	}, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	waitAllowed(t, viaAPIServer, ns)
	user := "direct-" + rand.String(6)
	bindRole(t, ns, user, "ClusterRole", "credo-mint")
	userCfg, err := env.UserConfig(user, nil)
	g.Expect(err).NotTo(HaveOccurred())
	userClient, err := client.New(userCfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	waitAllowed(t, userClient, ns)
	before := secretOf(g, ns, s.Name)

	forged := map[string]string{"X-Remote-User": "system:admin", "X-Remote-Group": "system:masters"}
	direct := map[string]struct {
		cfg     rest.TLSClientConfig
		token   string
		headers map[string]string
	}{
		"a ServiceAccount's bearer token": {token: token},
		"a user's client certificate signed by the cluster's client CA": {
			cfg: rest.TLSClientConfig{CertData: userCfg.CertData, KeyData: userCfg.KeyData},
		},
		"front-proxy headers naming system:masters without the front-proxy certificate": {headers: forged},
		"front-proxy headers over a user's client certificate": {
			cfg: rest.TLSClientConfig{CertData: userCfg.CertData, KeyData: userCfg.KeyData}, headers: forged,
		},
		"front-proxy headers beside a bearer token": {token: token, headers: forged},
		"kube-apiserver's front-proxy certificate without a user header": {
			cfg: rest.TLSClientConfig{CertFile: filepath.Join(env.Dir, "front-proxy-client.crt"), KeyFile: filepath.Join(env.Dir, "front-proxy-client.key")},
		},
		"no credentials": {},
	}
	path := "/apis/access.credo.dev/v1alpha1/namespaces/" + ns + "/accounts/db/mint"
	body := `{"apiVersion":"access.credo.dev/v1alpha1","kind":"Mint","spec":{}}`
	for name, d := range direct {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			cfg := &rest.Config{Host: accessAPIURL, TLSClientConfig: d.cfg, BearerToken: d.token}
			cfg.CAData = accessAPICA
			code, status := post(g, cfg, path, body, d.headers)
			g.Expect(code).To(Equal(http.StatusUnauthorized), "status: %+v", status)
			g.Expect(status.Reason).To(Equal(metav1.StatusReasonUnauthorized))
			g.Expect(status.Message).To(And(ContainSubstring("kube-apiserver"), ContainSubstring("kubectl credo mint")))
		})
	}
	after := secretOf(g, ns, s.Name)
	g.Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "no direct request wrote the account Secret")
	g.Expect(after.Annotations[keys.Origin]).To(Equal(string(credv1.OriginNotIssued)))

	// The probes kubelet or an operator may send need no credentials.
	for _, p := range []string{"/healthz", "/readyz", "/livez"} {
		code, status := get(g, &rest.Config{Host: accessAPIURL, TLSClientConfig: rest.TLSClientConfig{CAData: accessAPICA}}, p)
		g.Expect(code).To(Equal(http.StatusOK), "%s: %+v", p, status)
	}

	// The same ServiceAccount through kube-apiserver: minted, and audited
	// with its name and the account's.
	m, err := mintAccount(ctx, viaAPIServer, ns, "db", "", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(matches(verifier.SHA256Hex, string(secretOf(g, ns, s.Name).Data["password"]), m.Status.Password)).To(BeTrue(),
		"the proxied mint stored the verifier of the returned password (value not printed)")
	sa := "system:serviceaccount:" + ns + ":pipeline"
	g.Eventually(func() bool { return audited(g, sa, ns, "db") }, "10s", "100ms").Should(BeTrue(),
		"kube-apiserver's audit log records the mint of db by %s", sa)
}

// mintingServiceAccount creates the ServiceAccount name in ns bound to the
// shipped credo-mint ClusterRole and returns a token of it.
func mintingServiceAccount(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := platform.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-credo-mint", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "credo-mint"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	if err := platform.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	if err := platform.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("requesting a token of ServiceAccount %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

// post sends body to path over cfg's transport, straight to the server
// cfg names, with extra headers; it returns the status code and the
// Status the server answered.
func post(g Gomega, cfg *rest.Config, path, body string, headers map[string]string) (int, metav1.Status) {
	req, err := http.NewRequest(http.MethodPost, cfg.Host+path, strings.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return send(g, cfg, req)
}

func get(g Gomega, cfg *rest.Config, path string) (int, metav1.Status) {
	req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
	g.Expect(err).NotTo(HaveOccurred())
	return send(g, cfg, req)
}

// send returns the code and, when the answer is a Status, the Status; a
// success (a password) is never decoded or printed.
func send(g Gomega, cfg *rest.Config, req *http.Request) (int, metav1.Status) {
	hc, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	hc.Timeout = 30 * time.Second
	resp, err := hc.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	var status metav1.Status
	if resp.StatusCode >= 300 {
		_ = json.Unmarshal(raw, &status)
	}
	return resp.StatusCode, status
}

// audited reports whether kube-apiserver's audit log holds a successful
// accounts/<acct>/mint in ns by user.
func audited(g Gomega, user, ns, acct string) bool {
	for _, e := range auditEvents(g) {
		r := e.ObjectRef
		if r.APIGroup == "access.credo.dev" && r.Namespace == ns && r.Resource == "accounts" && r.Subresource == "mint" &&
			r.Name == acct && e.User.Username == user && e.Verb == "create" && e.ResponseStatus.Code == http.StatusCreated {
			return true
		}
	}
	return false
}

// auditEvents reads kube-apiserver's audit log: the events with an object
// and a response status.
func auditEvents(g Gomega) []auditEvent {
	f, err := os.Open(env.AuditLogPath)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.ObjectRef != nil && e.ResponseStatus != nil {
			events = append(events, e)
		}
	}
	g.Expect(sc.Err()).NotTo(HaveOccurred())
	return events
}
