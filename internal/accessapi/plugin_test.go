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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	accessv1 "github.com/credo-dev/credo/api/access/v1alpha1"
	credv1 "github.com/credo-dev/credo/api/credentials/v1alpha1"
	"github.com/credo-dev/credo/internal/verifier"
	"github.com/credo-dev/credo/tests/controlplane"
)

// kubectl credo mint and revoke expect, by default, the account Secret's
// version the account view shows just before their request: a mint someone
// else makes in between fails theirs with 409 instead of silently
// superseding the password the other received. --force supersedes. The
// shipped roles credo-mint and credo-revoke are enough.
func TestPluginExpectsTheVersionItRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	s := newAccount(t, ns, "db", "app", verifier.SHA256Hex, credv1.OwnerTenant)
	c, user := newMinter(t, ns)
	waitAllowedOn(t, c, ns, "revocation")
	cfg, err := env.UserConfig(user, nil)
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := env.WriteKubeconfig(user, nil, user+".kubeconfig")
	g.Expect(err).NotTo(HaveOccurred())
	stored := func() string { return string(secretOf(g, ns, s.Name).Data["password"]) }

	// Straight through kube-apiserver, with the shipped roles alone.
	out, errOut, err := runPlugin(t, kubeconfig, "mint", "db", "-n", ns, "-o", "json")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(matches(verifier.SHA256Hex, stored(), mintedPassword(g, out))).To(BeTrue(), "the plugin's mint is stored (value not printed)")

	// Through a proxy that lets another minter mint the account just before
	// the plugin's request reaches kube-apiserver (after the plugin read the
	// account view).
	other, _ := newMinter(t, ns)
	proxy, competing := interleavingProxy(t, cfg, func() (string, error) {
		m, err := mintAccount(ctx, other, ns, "db", "", "")
		return m.Status.Password, err
	})
	viaProxy := proxyKubeconfig(t, proxy)

	out, errOut, err = runPlugin(t, viaProxy, "mint", "db", "-n", ns, "-o", "json")
	g.Expect(err).To(HaveOccurred(), "the mint made in between must fail the plugin's")
	g.Expect(out).To(BeEmpty())
	g.Expect(errOut).To(And(ContainSubstring("cannot be fulfilled"), ContainSubstring("someone else minted or revoked in between")))
	theirs := competing()
	g.Expect(matches(verifier.SHA256Hex, stored(), theirs)).To(BeTrue(), "the other minter's password still works (value not printed)")

	_, errOut, err = runPlugin(t, viaProxy, "revoke", "db", "-n", ns)
	g.Expect(err).To(HaveOccurred(), "the mint made in between must fail the plugin's revocation")
	g.Expect(errOut).To(ContainSubstring("someone else minted or revoked in between"))
	theirs = competing()
	g.Expect(matches(verifier.SHA256Hex, stored(), theirs)).To(BeTrue(), "the other minter's password still works (value not printed)")

	out, errOut, err = runPlugin(t, viaProxy, "mint", "db", "-n", ns, "-o", "json", "--force")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	competing()
	g.Expect(matches(verifier.SHA256Hex, stored(), mintedPassword(g, out))).To(BeTrue(), "--force supersedes the mint made in between (value not printed)")

	_, errOut, err = runPlugin(t, viaProxy, "mint", "db", "-n", ns, "-o", "json", "--force", "--resource-version", "1")
	g.Expect(err).To(HaveOccurred())
	g.Expect(errOut).To(ContainSubstring("--force and --resource-version exclude each other"))
}

// interleavingProxy serves kube-apiserver's API with cfg's credentials and,
// before forwarding each POST, runs between (another client's mint). The
// returned function waits for the password between returned, once per POST.
func interleavingProxy(t *testing.T, cfg *rest.Config, between func() (string, error)) (*httptest.Server, func() string) {
	t.Helper()
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(upstream)
	forward.Transport = rt
	passwords := make(chan string, 1)
	var failed atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			p, err := between()
			if err != nil {
				failed.Store(err.Error())
			}
			passwords <- p
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy, func() string {
		p := <-passwords
		if msg, ok := failed.Load().(string); ok {
			t.Fatalf("the mint in between failed: %s", msg)
		}
		return p
	}
}

// proxyKubeconfig writes a kubeconfig for the proxy, which authenticates
// its requests itself.
func proxyKubeconfig(t *testing.T, proxy *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster: {server: " + proxy.URL + "}\n" +
		"users:\n- name: proxy\n  user: {}\ncontexts:\n- name: proxy\n  context: {cluster: proxy, user: proxy}\ncurrent-context: proxy\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mintedPassword(g Gomega, out string) string {
	var status accessv1.MintStatus
	g.Expect(json.Unmarshal([]byte(out), &status)).To(Succeed(), "the plugin prints the Mint's status as JSON")
	return status.Password
}

var (
	pluginOnce sync.Once
	pluginPath string
	pluginErr  error
)

// runPlugin runs kubectl-credo, built once from cmd/kubectl-credo, with
// kubeconfig; it returns its stdout and stderr.
func runPlugin(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	pluginOnce.Do(func() {
		pluginPath = filepath.Join(env.Dir, "kubectl-credo")
		build := exec.Command("go", "build", "-o", pluginPath, "./cmd/kubectl-credo")
		build.Dir = controlplane.RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("go build ./cmd/kubectl-credo: %w\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	cmd := exec.Command(pluginPath, append(args, "--kubeconfig", kubeconfig)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
